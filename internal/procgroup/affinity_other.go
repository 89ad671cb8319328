//go:build unix && !linux

package procgroup

import "errors"

// withAffinity: only Linux has sched_setaffinity; a plan's cpus cannot be applied here.
func withAffinity([]int, func() error) error {
	return errors.New("procgroup: a CPU set (hardware cpus) can only be applied on Linux")
}

package procgroup

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// withAffinity runs start on the calling (locked) thread restricted to cpus, and gives
// the thread its own set back afterwards.
func withAffinity(cpus []int, start func() error) error {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("procgroup: read this thread's CPU set: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("procgroup: restrict to CPUs %v: %w", cpus, err)
	}
	defer unix.SchedSetaffinity(0, &old)
	return start()
}

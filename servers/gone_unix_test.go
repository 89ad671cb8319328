//go:build unix

package servers

import "syscall"

// gone reports whether no process has this pid: kill(pid, 0) fails with ESRCH.
// A zombie still counts as present.
func gone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

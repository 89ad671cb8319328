//go:build unix

package apply

import "syscall"

// processGone reports whether no process has this pid: kill(pid, 0) fails with ESRCH.
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

//go:build unix

package proctest

import "syscall"

// Exists reports whether a process has this pid: kill(pid, 0) fails with ESRCH only when
// none has. A zombie still counts. Tests use it to prove a server died with its group.
func Exists(pid int) bool { return syscall.Kill(pid, 0) != syscall.ESRCH }

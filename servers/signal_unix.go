//go:build unix

package servers

import "syscall"

var signals = map[string]syscall.Signal{
	"SIGTERM": syscall.SIGTERM,
	"SIGINT":  syscall.SIGINT,
	"SIGQUIT": syscall.SIGQUIT,
	"SIGHUP":  syscall.SIGHUP,
	"SIGKILL": syscall.SIGKILL,
	"SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2,
}

// signalGroup sends sig to every process of group pgid; a group with no process left is
// not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// groupExists reports whether process group pgid has any process left.
func groupExists(pgid int) bool { return syscall.Kill(-pgid, 0) != syscall.ESRCH }

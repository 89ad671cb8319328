package servers

import "syscall"

// Windows has no process groups to signal: procgroup.Start refuses there, so planrun
// never holds a managed server on Windows and these are never reached with a live group.
// They exist so that planrun, which talks to servers started by hand on Windows, builds.
var signals = map[string]syscall.Signal{
	"SIGTERM": syscall.SIGTERM,
	"SIGINT":  syscall.SIGINT,
	"SIGQUIT": syscall.SIGQUIT,
	"SIGHUP":  syscall.SIGHUP,
	"SIGKILL": syscall.SIGKILL,
}

func signalGroup(int, syscall.Signal) error { return nil }

func groupExists(int) bool { return false }

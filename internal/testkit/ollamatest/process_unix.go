//go:build unix

package ollamatest

import (
	"syscall"

	"github.com/planrun/planrun/servers"
)

func checkPlatform() error { return nil }

func signalGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	// ESRCH (group already empty) is the outcome we want, not an error.
	_ = syscall.Kill(-pgid, sig)
}

// groupMembers lists the live (not zombie) processes in process group pgid.
func groupMembers(pgid int) []int { return servers.GroupMembers(pgid) }

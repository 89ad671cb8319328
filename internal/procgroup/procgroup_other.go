//go:build !unix

package procgroup

import (
	"errors"
	"os"
	"os/exec"
)

// Guard is the watchdog of one started process group (Unix only).
type Guard struct{}

// Start refuses: without Unix process groups a server's children could not die with it.
func Start(cmd *exec.Cmd) (*Guard, error) {
	return nil, errors.New("a managed server needs Unix process groups, so that it dies with planrun; on this system start the server yourself and point the backend's url at it")
}

// Release does nothing.
func (g *Guard) Release() {}

// PGID is 0.
func (g *Guard) PGID() int { return 0 }

// StartOn refuses as Start does.
func StartOn(cmd *exec.Cmd, _ []int) (*Guard, error) { return Start(cmd) }

// Kill kills the process pid: Start starts no group here.
func Kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

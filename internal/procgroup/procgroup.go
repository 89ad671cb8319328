//go:build unix

// Package procgroup starts a command as the leader of its own process group and ties
// the whole group's life to this process: when this process dies, however it dies
// (SIGKILL, a `go test -timeout` panic, a crash), the group is SIGKILLed, the leader's
// children included.
//
// Two mechanisms, because neither covers everything alone:
//   - On Linux the leader gets Pdeathsig = SIGKILL. The kernel sends it when the thread
//     that forked the leader exits, not the process, so every fork happens on one
//     goroutine locked to its thread for the life of the process. Pdeathsig reaches only
//     the leader: a server's own children (Ollama's `ollama runner`, vLLM's engine
//     workers) are orphaned and keep running.
//   - A watchdog, `/bin/sh` in a process group of its own, holds the read end of a pipe
//     whose write end only this process holds. When this process dies the kernel closes
//     that end, the watchdog reads end-of-file and SIGKILLs the whole group. Release
//     tells it, with a line on the pipe, that the group was stopped in order.
//
// Servers started by tests (internal/testkit/ollamatest and its kin) and servers that apply
// manages (servers) start through Start.
package procgroup

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// watchdogScript waits for a line (Release) or end-of-file (this process died); only on
// end-of-file does it kill the group named by $1. It ignores the terminal's signals so a
// Ctrl-C that planrun handles, or a closed terminal, does not disarm it.
const watchdogScript = `trap '' INT HUP QUIT; read -r line || kill -s KILL -- -"$1" 2>/dev/null; exit 0`

// Guard is the watchdog of one started process group.
type Guard struct {
	pgid int
	w    *os.File
	once sync.Once
}

// Start starts cmd as the leader of a new process group (its pid is the group id) that
// dies with this process. It sets cmd.SysProcAttr's Setpgid and, on Linux, Pdeathsig,
// keeping the caller's other fields. If the watchdog cannot start, the group is killed
// and reaped and Start returns the error: a server without it could outlive us.
func Start(cmd *exec.Cmd) (*Guard, error) { return StartOn(cmd, nil) }

// StartOn is Start with the leader restricted to the CPUs listed (none: unrestricted).
// The fork thread takes the set just for the fork, so every thread the leader and its
// children ever make inherits it from their first instruction; setting it on a running
// process would reach only the thread it names.
func StartOn(cmd *exec.Cmd, cpus []int) (*Guard, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
	start := cmd.Start
	if len(cpus) > 0 {
		start = func() error { return withAffinity(cpus, cmd.Start) }
	}
	if err := onForkThread(start); err != nil {
		return nil, err
	}
	g, err := watch(cmd.Process.Pid)
	if err != nil {
		Kill(cmd.Process.Pid)
		cmd.Wait()
		return nil, fmt.Errorf("procgroup: start the watchdog of %s: %w", cmd.Path, err)
	}
	return g, nil
}

// watch starts the watchdog of group pgid. A process that is the init of its own PID
// namespace (planrun in a container: a Kubernetes pod's agent, whose image has no shell)
// needs none: when it dies the kernel kills every process of the namespace.
func watch(pgid int) (*Guard, error) {
	if os.Getpid() == 1 {
		return &Guard{pgid: pgid}, nil
	}
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, err
	}
	defer r.Close()
	wd := exec.Command("/bin/sh", "-c", watchdogScript, "procgroup-watchdog", strconv.Itoa(pgid))
	wd.Stdin = r
	// Its own group: the signals Stop sends to the server's group, or a terminal's to
	// planrun's, must not reach it.
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := wd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	go wd.Wait() // reap it whenever it ends
	return &Guard{pgid: pgid, w: w}, nil
}

// Release ends the watchdog without signalling the group. Call it once the group is
// gone (a later kill could hit a new group that reuses the id); safe to call twice.
func (g *Guard) Release() {
	g.once.Do(func() {
		if g.w != nil {
			g.w.Write([]byte("\n"))
			g.w.Close()
		}
	})
}

// PGID is the group's id: the leader's pid.
func (g *Guard) PGID() int { return g.pgid }

var (
	forkOnce sync.Once
	forks    chan func()
)

// onForkThread runs start on a goroutine locked to its OS thread that never exits, so
// the thread Pdeathsig watches lives as long as the process. (The Go runtime ends a
// thread only when a goroutine locked to it exits; a caller's goroutine may be one.)
func onForkThread(start func() error) error {
	forkOnce.Do(func() {
		forks = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range forks {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	forks <- func() { done <- start() }
	return <-done
}

// Kill kills the process group whose leader is pid (one Start started), all of it.
func Kill(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

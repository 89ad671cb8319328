package servers

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// If planrun itself is SIGKILLed, nothing of it runs to stop the server: the kernel's
// parent-death signal must kill the server's leader, and procgroup's watchdog the
// leader's own children (as Ollama's runners are).
func TestServerGroupDiesWhenPlanrunDies(t *testing.T) {
	// Orphans of the killed helper become this process's children, so the test can see
	// them exit and reap them, as planrun would.
	becomeSubreaper()
	pidfile := filepath.Join(t.TempDir(), "pids")
	mgr, out := startManagerHelper(t, Spec{
		Name:    "srv",
		Command: helperCommand(t, "-child", "-pidfile="+pidfile),
		Env:     map[string]string{helperEnv: "serve"},
	})
	leader, child := readPids(t, pidfile)
	t.Cleanup(func() {
		syscall.Kill(-leader, syscall.SIGKILL)
		groupGone(leader, time.Now().Add(hangGuard))
	})
	waitFor(t, "the manager to acquire", func() bool { return strings.Contains(out.String(), "acquired") })
	if err := mgr.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitExit(t, mgr)
	waitFor(t, "the server leader to die", func() bool {
		s := procState(leader)
		return s == "" || s == "Z"
	})
	waitFor(t, "the server's child to die", func() bool {
		s := procState(child)
		return s == "" || s == "Z"
	})
}

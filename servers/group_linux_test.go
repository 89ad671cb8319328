package servers

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// GroupPIDs finds the server's child as well as its leader, and nothing outside its
// group (this test process).
func TestGroupPIDs(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	spec, opts := serverSpec(t, "srv", "-child", "-pidfile="+pidfile)
	p, err := Start(withTimeout(t), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	leader, child := readPids(t, pidfile)
	got := p.GroupPIDs()
	if len(got) != 2 || got[0] != leader || !slices.Contains(got, child) || slices.Contains(got, os.Getpid()) {
		t.Fatalf("GroupPIDs() = %v, want the leader %d first and its child %d", got, leader, child)
	}
}

// A member that exited but was not yet reaped (a zombie) is no longer one of the group's
// processes, and a group with no member left has none.
func TestGroupMembersSkipsZombies(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); procState(pid) != "Z"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie (state %q)", pid, procState(pid))
		}
	}
	if got := GroupMembers(pid); len(got) != 0 {
		t.Errorf("GroupMembers(%d) = %v with its only member a zombie, want none", pid, got)
	}
	cmd.Wait()
}

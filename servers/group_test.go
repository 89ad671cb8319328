package servers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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

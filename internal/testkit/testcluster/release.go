package testcluster

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Processes lists the processes of this machine whose names (comm) start with one of
// names, as "pid name".
func Processes(names []string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		name := string(bytes.TrimSpace(b))
		if err == nil && slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(name, n) }) {
			out = append(out, filepath.Base(filepath.Dir(p))+" "+name)
		}
	}
	return out
}

// CheckRelease shows that a test process that started the cluster stops it when it ends:
// the test calls it first thing, and it runs the same test in a child process, where
// (childEnv set) it only calls c.Require and returns false, so that the child's TestMain
// releases the cluster; the test then returns too. In the parent, no process named in
// daemons may be left afterwards, and it returns true for the test's own checks. It
// skips where the daemons already run (a cluster started by hand or by another test).
func (c *Cluster) CheckRelease(t *testing.T, childEnv string, daemons []string) bool {
	t.Helper()
	if os.Getenv(childEnv) != "" {
		c.Require(t)
		return false
	}
	if running := Processes(daemons); len(running) > 0 {
		t.Skipf("the cluster's daemons already run here (%v): started by hand or by another test process, so this one cannot show it stopped", running)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Skipf("the child skipped: %s", out)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("stopping the cluster the tests started")) {
		t.Errorf("the child did not say it stopped the cluster:\n%s", out)
	}
	if left := Processes(daemons); len(left) > 0 {
		t.Errorf("daemons left running after the tests: %v\n%s", left, out)
	}
	return true
}

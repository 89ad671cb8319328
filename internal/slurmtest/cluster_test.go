package slurmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

var daemonNames = []string{"munged", "slurmctld", "slurmd", "slurmstepd", "slurmscriptd"}

// daemons lists the Slurm and munge daemons running on this machine.
func daemons() []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if name := string(bytes.TrimSpace(b)); err == nil && slices.Contains(daemonNames, name) {
			out = append(out, filepath.Base(filepath.Dir(p))+" "+name)
		}
	}
	return out
}

// A test process that started the cluster stops it when it ends (it was the only one
// using it): no daemon and no /etc/slurm/slurm.conf symlink stay behind.
func TestReleaseStopsTheClusterTheTestsStarted(t *testing.T) {
	if os.Getenv("PLANRUN_SLURMTEST_CHILD") != "" {
		Require(t) // starts the cluster; this process's Main releases it
		return
	}
	if running := daemons(); len(running) > 0 {
		t.Skipf("Slurm or munge already runs here (%v): started by hand or by another test process, so this one cannot show it stopped", running)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReleaseStopsTheClusterTheTestsStarted$", "-test.v")
	cmd.Env = append(os.Environ(), "PLANRUN_SLURMTEST_CHILD=1")
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
	if left := daemons(); len(left) > 0 {
		t.Errorf("daemons left running after the tests: %v\n%s", left, out)
	}
	if target, err := os.Readlink("/etc/slurm/slurm.conf"); err == nil && strings.HasPrefix(target, clusterDir()) {
		t.Errorf("/etc/slurm/slurm.conf still points at the test cluster (%s)", target)
	}
}

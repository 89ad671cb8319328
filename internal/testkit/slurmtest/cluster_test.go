package slurmtest

import (
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// A test process that started the cluster stops it when it ends (it was the only one
// using it): no daemon and no /etc/slurm/slurm.conf symlink stay behind.
func TestReleaseStopsTheClusterTheTestsStarted(t *testing.T) {
	if !cluster.CheckRelease(t, "PLANRUN_SLURMTEST_CHILD", []string{"munged", "slurmctld", "slurmd", "slurmstepd", "slurmscriptd"}) {
		return
	}
	if target, err := os.Readlink("/etc/slurm/slurm.conf"); err == nil && strings.HasPrefix(target, clusterDir()) {
		t.Errorf("/etc/slurm/slurm.conf still points at the test cluster (%s)", target)
	}
}

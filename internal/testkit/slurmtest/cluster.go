// Package slurmtest gives integration tests the single-node Slurm cluster that
// scripts/slurm-cluster.sh runs on this machine (partitions "small" and "large").
//
//	slurmtest.Require(t) // starts the cluster when it is not up
//
// The cluster needs root and Debian's slurmctld, slurmd, slurm-client and munge packages;
// without them the test is skipped with that reason, or fails under PLANRUN_INTEGRATION
// (realserver.Missing; CI installs them, runs as root and sets it). The cluster is leased
// across test processes as internal/testkit/testcluster says, and stopped by Release (from the
// package's TestMain) when the last test process using it ends, if the tests started it.
package slurmtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/internal/testkit/testcluster"
)

// Partitions are the cluster's two partitions, standing for two kinds of card.
var Partitions = []string{"small", "large"}

var cluster = &testcluster.Cluster{
	Script: "scripts/slurm-cluster.sh", DirEnv: "PLANRUN_SLURM_DIR", Dir: "/tmp/planrun-slurm",
	Missing: func() string {
		if os.Geteuid() != 0 {
			return "the Slurm test cluster runs as root (scripts/slurm-cluster.sh); not root"
		}
		return realserver.SystemMissing("slurm")
	},
}

// clusterDir is where scripts/slurm-cluster.sh keeps the cluster (its $dir).
func clusterDir() string { return cluster.Directory() }

// Require makes sure the cluster is up, or ends t through realserver.Missing when this
// machine cannot run it (not root, packages missing). A cluster that should start but
// does not fails t.
func Require(t testing.TB) {
	t.Helper()
	cluster.Require(t)
}

// Release ends this process's use of the cluster; when it was the last test process
// using a cluster the tests started, the cluster is stopped (daemons and the
// /etc/slurm/slurm.conf symlink). A package whose tests call Require calls it from
// TestMain after m.Run.
func Release() { cluster.Release() }

// Main runs the tests of a package that uses the cluster, then releases it.
func Main(m *testing.M) int {
	code := m.Run()
	Release()
	return code
}

// RequireAccounting makes sure the running cluster gathers job accounting, which sstat
// reads (scripts/slurm-cluster.sh sets JobAcctGatherType=jobacct_gather/linux); a
// cluster started by an older script does not, and t ends through realserver.Missing
// naming how to restart it. Call it after Require.
func RequireAccounting(t testing.TB) {
	t.Helper()
	out, err := exec.Command("scontrol", "show", "config").Output()
	if err != nil {
		t.Fatalf("scontrol show config: %v", err)
	}
	if strings.Contains(string(out), "jobacct_gather/none") {
		realserver.Missing(t, "the running Slurm test cluster gathers no job accounting (JobAcctGatherType=jobacct_gather/none: "+
			"started by an older scripts/slurm-cluster.sh); restart it: scripts/slurm-cluster.sh stop; scripts/slurm-cluster.sh start")
	}
}

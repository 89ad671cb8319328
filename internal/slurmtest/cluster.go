// Package slurmtest gives integration tests the single-node Slurm cluster that
// scripts/slurm-cluster.sh runs on this machine (partitions "small" and "large").
//
//	slurmtest.Require(t) // starts the cluster when it is not up
//
// The cluster needs root and Debian's slurmctld, slurmd, slurm-client and munge packages;
// without them the test is skipped with that reason, or fails under PLANRUN_INTEGRATION
// (realserver.Missing; CI installs them, runs as root and sets it).
// While a test process uses the cluster it holds a shared lock on the cluster's lease
// file; a cluster the helper started is marked so, and Release (from the package's
// TestMain) stops it when the last test process using it ends, through
// scripts/slurm-cluster.sh release. A cluster started by hand is left running.
package slurmtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planrun/planrun/internal/realserver"
)

// Partitions are the cluster's two partitions, standing for two kinds of card.
var Partitions = []string{"small", "large"}

var (
	once     sync.Once
	startErr error
	skipWhy  string
	// lease is the shared lock this process holds on the cluster while it runs; nil
	// when it never used the cluster.
	lease  *os.File
	script string
)

// clusterDir is where scripts/slurm-cluster.sh keeps the cluster (its $dir).
func clusterDir() string {
	if d := os.Getenv("PLANRUN_SLURM_DIR"); d != "" {
		return d
	}
	return "/tmp/planrun-slurm"
}

// Require makes sure the cluster is up, or ends t through realserver.Missing when this
// machine cannot run it (not root, packages missing). A cluster that should start but
// does not fails t.
func Require(t testing.TB) {
	t.Helper()
	once.Do(start)
	if skipWhy != "" {
		realserver.Missing(t, skipWhy)
	}
	if startErr != nil {
		t.Fatal(startErr)
	}
}

func start() {
	if os.Geteuid() != 0 {
		skipWhy = "the Slurm test cluster runs as root (scripts/slurm-cluster.sh); not root"
		return
	}
	for _, bin := range []string{"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged"} {
		if _, err := os.Stat(bin); err != nil {
			skipWhy = "Slurm is not installed (" + bin + " missing): apt-get install slurmctld slurmd slurm-client munge"
			return
		}
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		skipWhy = "sbatch is not on PATH: apt-get install slurm-client"
		return
	}
	var err error
	if script, err = clusterScript(); err != nil {
		startErr = err
		return
	}
	// The lease first: a release stopping the cluster holds it exclusively, so this waits
	// for the stop and then starts the cluster again.
	dir := clusterDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		startErr = err
		return
	}
	if lease, err = os.OpenFile(filepath.Join(dir, "tests.lock"), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		startErr = err
		return
	}
	if err := lockShared(lease); err != nil {
		startErr = errors.New("locking the Slurm test cluster's lease: " + err.Error())
		return
	}
	// The script starts one cluster at a time (its start lock): test processes of other
	// packages may be here at once, and one that finds the cluster up leaves it alone. It
	// marks a cluster it starts as the tests' (--tests), so the last Release stops it.
	if out, err := exec.Command(script, "start", "--tests").CombinedOutput(); err != nil {
		startErr = errors.New("scripts/slurm-cluster.sh start failed: " + err.Error() + "\n" + string(out))
	}
}

// Release ends this process's use of the cluster; when it was the last test process
// using a cluster the tests started, the cluster is stopped (daemons and the
// /etc/slurm/slurm.conf symlink). A package whose tests call Require calls it from
// TestMain after m.Run.
func Release() {
	if lease == nil {
		return
	}
	lease.Close() // drops the shared lock, so the release can take it exclusively
	lease = nil
	// What it did (stopped, left to another test process, or left running as started
	// by hand) goes to stderr.
	out, err := exec.Command(script, "release").CombinedOutput()
	os.Stderr.Write(out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "slurmtest: scripts/slurm-cluster.sh release: %v\n", err)
	}
}

// Main runs the tests of a package that uses the cluster, then releases it.
func Main(m *testing.M) int {
	code := m.Run()
	Release()
	return code
}

// clusterScript finds scripts/slurm-cluster.sh above the test's directory.
func clusterScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "slurm-cluster.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/slurm-cluster.sh not found above the test's directory")
		}
		dir = parent
	}
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

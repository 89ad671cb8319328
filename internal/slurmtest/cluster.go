// Package slurmtest gives integration tests the single-node Slurm cluster that
// scripts/slurm-cluster.sh runs on this machine (partitions "small" and "large").
//
//	slurmtest.Require(t) // starts the cluster when it is not up
//
// The cluster needs root and Debian's slurmctld, slurmd, slurm-client and munge packages;
// without them the test is skipped with that reason (CI installs them and runs as root).
// A cluster the helper started is left running for the next test and package:
// scripts/slurm-cluster.sh stop ends it.
package slurmtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Partitions are the cluster's two partitions, standing for two kinds of card.
var Partitions = []string{"small", "large"}

var (
	once     sync.Once
	startErr error
	skipWhy  string
)

// Require makes sure the cluster is up, or skips t when this machine cannot run it (not
// root, packages missing). A cluster that should start but does not fails t.
func Require(t testing.TB) {
	t.Helper()
	once.Do(start)
	if skipWhy != "" {
		t.Skip(skipWhy)
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
	script, err := clusterScript()
	if err != nil {
		startErr = err
		return
	}
	if exec.Command(script, "status").Run() == nil {
		return
	}
	if out, err := exec.Command(script, "start").CombinedOutput(); err != nil {
		startErr = errors.New("scripts/slurm-cluster.sh start failed: " + err.Error() + "\n" + string(out))
	}
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

// Package testcluster gives integration tests a cluster that a script of the repository
// runs on this machine (scripts/slurm-cluster.sh, scripts/k8s-cluster.sh), shared by the
// test processes of several packages at once. internal/testkit/slurmtest and internal/testkit/k8stest
// are its two clusters.
//
// While a test process uses the cluster it holds a shared lock on the cluster's lease
// file ($dir/tests.lock); a cluster the helper started (`SCRIPT start --tests`) is marked
// so, and Release (from the package's TestMain) stops it when the last test process using
// it ends, through `SCRIPT release`. A cluster started by hand is left running. A
// machine that cannot run the cluster (not root, packages missing) skips the test, or
// fails it under PLANRUN_INTEGRATION (realserver.Missing).
package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/planrun/planrun/internal/testkit/realserver"
)

// Cluster is one script's cluster, as the tests of one process use it.
type Cluster struct {
	// Script is the script's path under the repository, e.g. "scripts/slurm-cluster.sh".
	Script string
	// DirEnv names the variable that moves the cluster's directory; Dir is its default.
	DirEnv, Dir string
	// Missing says why this machine cannot run the cluster, or "" when it can.
	Missing func() string

	once     sync.Once
	startErr error
	skipWhy  string
	lease    *os.File // the shared lock held while this process uses the cluster
	script   string
}

// Directory is where the script keeps the cluster.
func (c *Cluster) Directory() string {
	if d := os.Getenv(c.DirEnv); d != "" {
		return d
	}
	return c.Dir
}

// Require makes sure the cluster is up, or ends t through realserver.Missing when this
// machine cannot run it. A cluster that should start but does not fails t.
func (c *Cluster) Require(t testing.TB) {
	t.Helper()
	c.once.Do(c.start)
	if c.skipWhy != "" {
		realserver.Missing(t, c.skipWhy)
	}
	if c.startErr != nil {
		t.Fatal(c.startErr)
	}
}

func (c *Cluster) start() {
	if c.skipWhy = c.Missing(); c.skipWhy != "" {
		return
	}
	root, err := realserver.RepoRoot()
	if err != nil {
		c.startErr = err
		return
	}
	c.script = filepath.Join(root, c.Script)
	// The lease first: a release stopping the cluster holds it exclusively, so this waits
	// for the stop and then starts the cluster again.
	dir := c.Directory()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.startErr = err
		return
	}
	if c.lease, err = os.OpenFile(filepath.Join(dir, "tests.lock"), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		c.startErr = err
		return
	}
	if err := lockShared(c.lease); err != nil {
		c.startErr = fmt.Errorf("locking the lease of %s's cluster: %w", c.Script, err)
		return
	}
	// The script starts one cluster at a time (its start lock): test processes of other
	// packages may be here at once, and one that finds the cluster up leaves it alone. It
	// marks a cluster it starts as the tests' (--tests), so the last Release stops it.
	if out, err := exec.Command(c.script, "start", "--tests").CombinedOutput(); err != nil {
		c.startErr = errors.New(c.Script + " start failed: " + err.Error() + "\n" + string(out))
	}
}

// Release ends this process's use of the cluster; when it was the last test process
// using a cluster the tests started, the script stops it.
func (c *Cluster) Release() {
	if c.lease == nil {
		return
	}
	c.lease.Close() // drops the shared lock, so the release can take it exclusively
	c.lease = nil
	// What it did (stopped, left to another test process, or left running as started
	// by hand) goes to stderr.
	out, err := exec.Command(c.script, "release").CombinedOutput()
	os.Stderr.Write(out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %s release: %v\n", c.Script, err)
	}
}

// Package k8stest gives integration tests the single-node Kubernetes cluster that
// scripts/k8s-cluster.sh runs on this machine: real etcd, API server, controllers,
// scheduler and kubelet, with containerd, and the agent image built from this checkout.
//
//	k8stest.Require(t) // starts the cluster when it is not up (builds it the first time)
//
// The cluster needs root and Debian's containerd, runc and containernetworking-plugins;
// without them the test is skipped naming `scripts/k8s-cluster.sh start`, or fails under
// PLANRUN_INTEGRATION (realserver.Missing). It is leased across test processes as
// internal/testkit/testcluster says, and stopped by Release (from the package's TestMain) when
// the last test process using it ends, if the tests started it.
package k8stest

import (
	"cmp"
	"os"
	"path/filepath"
	"testing"

	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/internal/testkit/testcluster"
)

// The cluster as the tests use it: its context, its namespace and its one node.
const (
	Context   = "planrun"
	Namespace = "planrun"
	Node      = "planrun-node"
)

// Image is the agent image `scripts/k8s-cluster.sh start` imports (built from this
// checkout): planrun:dev, or the tag PLANRUN_K8S_IMAGE names for the script too, so that
// a checkout's tests can run its own image on a cluster another checkout started
// (PLANRUN_K8S_IMAGE=TAG scripts/k8s-cluster.sh image imports it).
var Image = cmp.Or(os.Getenv("PLANRUN_K8S_IMAGE"), "planrun:dev")

var cluster = &testcluster.Cluster{
	Script: "scripts/k8s-cluster.sh", DirEnv: "PLANRUN_K8S_DIR", Dir: "/tmp/planrun-k8s",
	Missing: func() string {
		const start = "; scripts/k8s-cluster.sh start builds and starts the test cluster"
		if os.Geteuid() != 0 {
			return "the Kubernetes test cluster runs as root (the kubelet and containerd)" + start
		}
		if why := realserver.SystemMissing("k8s"); why != "" {
			return why + start
		}
		return ""
	},
}

// Kubeconfig is the cluster's kubeconfig file.
func Kubeconfig() string { return filepath.Join(cluster.Directory(), "kubeconfig") }

// Require makes sure the cluster is up with the agent image imported, or ends t through
// realserver.Missing when this machine cannot run it. A cluster that should start but
// does not fails t.
func Require(t testing.TB) {
	t.Helper()
	cluster.Require(t)
}

// Release ends this process's use of the cluster; the last test process stops a
// cluster the tests started.
func Release() { cluster.Release() }

// Main runs the tests of a package that uses the cluster, then releases it.
func Main(m *testing.M) int {
	code := m.Run()
	Release()
	return code
}

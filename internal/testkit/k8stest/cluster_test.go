package k8stest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// A test process that started the cluster stops it when it ends (it was the only one
// using it): no daemon, no container and no network namespace stays behind.
func TestReleaseStopsTheClusterTheTestsStarted(t *testing.T) {
	if !cluster.CheckRelease(t, "PLANRUN_K8STEST_CHILD",
		[]string{"containerd", "etcd", "kube-apiserver", "kube-controller", "kube-scheduler", "coredns", "kubelet", "pause"}) {
		return
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); bytes.Contains(out, []byte("planrun-k8s")) {
		t.Errorf("the network namespace planrun-k8s is still there")
	}
}

package k8stest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

var daemonNames = []string{"containerd", "etcd", "kube-apiserver", "kube-controller", "kube-scheduler", "kubelet", "containerd-shim", "pause"}

// daemons lists the cluster's daemons (and what they ran) on this machine.
func daemons() []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		name := string(bytes.TrimSpace(b))
		if err == nil && slices.ContainsFunc(daemonNames, func(d string) bool { return len(name) >= len(d) && name[:len(d)] == d }) {
			out = append(out, filepath.Base(filepath.Dir(p))+" "+name)
		}
	}
	return out
}

// A test process that started the cluster stops it when it ends (it was the only one
// using it): no daemon, no container and no network namespace stays behind.
func TestReleaseStopsTheClusterTheTestsStarted(t *testing.T) {
	if os.Getenv("PLANRUN_K8STEST_CHILD") != "" {
		Require(t) // starts the cluster; this process's Main releases it
		return
	}
	if running := daemons(); len(running) > 0 {
		t.Skipf("the cluster's daemons already run here (%v): started by hand or by another test process, so this one cannot show it stopped", running)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReleaseStopsTheClusterTheTestsStarted$", "-test.v")
	cmd.Env = append(os.Environ(), "PLANRUN_K8STEST_CHILD=1")
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
		t.Errorf("processes left running after the tests: %v\n%s", left, out)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); bytes.Contains(out, []byte("planrun-k8s")) {
		t.Errorf("the network namespace planrun-k8s is still there")
	}
}

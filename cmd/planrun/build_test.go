package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Only the processes that place Kubernetes Jobs link the Kubernetes client: the plan
// decoder, the load agents and the ledger compile no k8s.io package, and the build
// without Kubernetes placement (-tags nokube: the agent image's, a remote agent's)
// links no Kubernetes module, is under 50 MB, says which build it is, and refuses a
// Kubernetes cell before anything is sent, naming the build.
func TestBuildWithoutKubernetes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds planrun with -tags nokube")
	}
	kubernetes := func(pkg string) bool {
		return strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/")
	}
	out, err := exec.Command("go", "list", "-deps", "../../plan", "../../load/fleet", "../../ledger").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if kubernetes(dep) {
			t.Errorf("plan, load/fleet or ledger depends on %s", dep)
		}
	}

	bin := filepath.Join(t.TempDir(), "planrun")
	build := exec.Command("go", "build", "-tags", "nokube", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the agent image is built
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nokube: %v\n%s", err, b)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= 50e6 {
		t.Errorf("the build without Kubernetes is %.1f MB, over 50 MB", float64(fi.Size())/1e6)
	}
	mods, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mods), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" && kubernetes(f[1]) {
			t.Errorf("the build without Kubernetes links %s", f[1])
		}
	}

	v, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(v), "placements: slurm; not kubernetes: this planrun was built with -tags nokube") {
		t.Errorf("planrun version: %q, %v", v, err)
	}
	results := t.TempDir()
	cmd := exec.Command(bin, "apply", "-results", results, "-var", "namespace=bench", "../../examples/kubernetes.hcl")
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
	b, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != exitError ||
		!strings.Contains(string(b), `hardware "cluster" runs its cells on Kubernetes, but this planrun was built with -tags nokube`) {
		t.Errorf("apply of a Kubernetes plan: exit %d, %s", code, b)
	}
	if left, _ := os.ReadDir(results); len(left) > 0 {
		t.Errorf("apply refused, yet wrote %d entries into the results directory", len(left))
	}
}

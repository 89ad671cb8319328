//go:build !nokube

package apply

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/k8stest"
	"github.com/planrun/planrun/internal/testkit/realserver"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement/kube"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// These tests run cells on the real single-node cluster of scripts/k8s-cluster.sh: the
// API server, the controllers, the scheduler and a kubelet running real pods of the agent
// image built from this checkout.

// k8sPlan is a plan with a "cluster" hardware block on the test cluster (settings are
// more lines of its kubernetes block) and a "here" block on this machine. Each runs the
// same workload against its own mock server, started by planrun: in the pod, the image's
// planrun; here, the static planrun the cluster script built from this checkout.
func k8sPlan(t *testing.T, settings, workload string) string {
	t.Helper()
	root, err := realserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	podPort, err1 := servers.FreePort()
	herePort, err2 := servers.FreePort()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if workload == "" {
		workload = `prompt_tokens = 32
  max_tokens    = 32
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 8
  seed          = 42`
	}
	mock := func(name, bin string, port int) string {
		return fmt.Sprintf(`server %q {
  command = [%q, "mock-server", "-addr", "127.0.0.1:%d", "-ttft", "50ms", "-tpot", "5ms"]
  ready {
    url     = "http://127.0.0.1:%d/health"
    timeout = "30s"
  }
}
backend "openai" %q {
  url    = "http://127.0.0.1:%d/v1"
  server = server.%s
}
`, name, bin, port, port, name, port, name)
	}
	return fmt.Sprintf(`
variable "url" { default = "" }
hardware "cluster" {
  kubernetes {
    kubeconfig        = %q
    context           = %q
    namespace         = %q
    image             = %q
    image_pull_policy = "Never"
    host_network      = true
    %s
  }
}
hardware "here" {}
%s%s
workload "w" {
  %s
}
matrix "cluster" {
  model    = ["mock"]
  tool     = [backend.openai.pod]
  hardware = [hardware.cluster]
  workload = [workload.w]
}
matrix "here" {
  model    = ["mock"]
  tool     = [backend.openai.here]
  hardware = [hardware.here]
  workload = [workload.w]
}
`, k8stest.Kubeconfig(), k8stest.Context, k8stest.Namespace, k8stest.Image, settings,
		mock("pod", "planrun", podPort), mock("here", filepath.Join(root, ".tools/k8s/agent/planrun"), herePort), workload)
}

// clusterClient is a client of the test cluster, to look at what a run left there.
func clusterClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", k8stest.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// leftOver lists the Jobs, ConfigMaps, Secrets, Services and pods labelled with the run.
func leftOver(t *testing.T, runDir string) []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", k8stest.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	left, err := kube.RunObjects(context.Background(), cfg, k8stest.Namespace, kube.LabelValue(filepath.Base(runDir)), true)
	if err != nil {
		t.Fatal(err)
	}
	return left
}

func runK8s(t *testing.T, ctx context.Context, src string, o Options) (*Result, error) {
	t.Helper()
	p, cells := loadPlan(t, src, "")
	o.Plan, o.Cells, o.NewBackend, o.GPU = p, cells, newBackend, gpu.Off()
	o.Jobs.Poll = 300 * time.Millisecond
	return Run(ctx, o)
}

// The mock server measured from an Indexed Job's pod gives the rows a local run of the
// same workload gives, within noise; every row names its Job, pod and node; the pod's
// request records join the run's; the run leaves no object; -resume skips the cell.
func TestKubernetesJobMatchesLocalRun(t *testing.T) {
	k8stest.Require(t)
	src := k8sPlan(t, "", "")
	res, err := runK8s(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[int]ledger.Row{"cluster": {}, "here": {}}
	for _, r := range res.Rows {
		rows[r.Hardware][r.Concurrency] = r
	}
	for _, c := range []int{1, 4} {
		pod, here := rows["cluster"][c], rows["here"][c]
		if pod.Status != ledger.StatusOK || here.Status != ledger.StatusOK {
			t.Fatalf("c=%d: cluster %s (%s), here %s (%s)", c, pod.Status, pod.Notes, here.Status, here.Notes)
		}
		if pod.Batch.Pod == "" || pod.Batch.Node != k8stest.Node || !strings.HasPrefix(pod.Batch.Job, k8stest.Namespace+"/planrun-cluster-1-") || pod.Batch.State != "COMPLETE" {
			t.Errorf("c=%d: the row does not say where it ran: job %q pod %q node %q state %q", c, pod.Batch.Job, pod.Batch.Pod, pod.Batch.Node, pod.Batch.State)
		}
		if here.Batch.Pod != "" || here.Batch.Job != "" {
			t.Errorf("c=%d: the local row names a pod: %q %q", c, here.Batch.Job, here.Batch.Pod)
		}
		// The mock holds TTFT at 50 ms and TPOT at 5 ms wherever it runs: the two rows
		// agree within the noise of a 2-core machine under load (at a load average of 30,
		// a starved client added 12 ms to one side's TTFT p50), and both are near the truth.
		for _, f := range []struct {
			name              string
			pod, here, truth  float64
			rel, floor, above float64
		}{
			{"TTFT p50", pod.TTFT.P50, here.TTFT.P50, 0.050, 0.25, 0.015, 0.030},
			{"TPOT p50", pod.TPOT.P50, here.TPOT.P50, 0.005, 0.15, 0.001, 0.002},
			{"E2E p50", pod.E2E.P50, here.E2E.P50, 0.050 + 31*0.005, 0.25, 0.030, 0.060},
		} {
			if math.IsNaN(f.pod) || math.Abs(f.pod-f.here) > max(f.rel*f.here, f.floor) {
				t.Errorf("c=%d: %s from the pod %.4fs, here %.4fs", c, f.name, f.pod, f.here)
			}
			for side, v := range map[string]float64{"pod": f.pod, "here": f.here} {
				if v < f.truth*0.95 || v > f.truth+f.above {
					t.Errorf("c=%d: %s %s %.4fs, the mock's is %.4fs", c, side, f.name, v, f.truth)
				}
			}
		}
		if pod.Succeeded != here.Succeeded || pod.Requests != here.Requests {
			t.Errorf("c=%d: %d/%d ok from the pod, %d/%d here", c, pod.Succeeded, pod.Requests, here.Succeeded, here.Requests)
		}
	}
	perCell := map[string]int{}
	for _, rec := range readSamples(t, res.RunDir) {
		perCell[rec.CellID]++
	}
	if perCell["cluster/mock/-/openai.pod/cluster/w"] == 0 || perCell["cluster/mock/-/openai.pod/cluster/w"] != perCell["here/mock/-/openai.here/here/w"] {
		t.Errorf("request records per cell: %v", perCell)
	}
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, ledger.ManifestFile))
	if err != nil || len(m.Jobs) != 1 || m.Jobs[0].Pod == "" || m.Jobs[0].State != "COMPLETE" {
		t.Errorf("manifest kubernetes_jobs %+v, %v", m.Jobs, err)
	}
	if left := leftOver(t, res.RunDir); len(left) > 0 {
		t.Errorf("the run left objects in the cluster: %v", left)
	}

	before, _ := ledger.ReadLedgerAll(filepath.Join(res.RunDir, ledger.ResultsFile))
	again, err := runK8s(t, context.Background(), src, Options{Resume: res.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := ledger.ReadLedgerAll(filepath.Join(again.RunDir, ledger.ResultsFile))
	m, _ = ledger.ReadManifest(filepath.Join(again.RunDir, ledger.ManifestFile))
	if len(after) != len(before) || len(m.Jobs) != 1 {
		t.Errorf("-resume of a complete run: %d rows then %d, %d jobs in the manifest (want no new row and no new Job)", len(before), len(after), len(m.Jobs))
	}
}

// podURL matches the pod's backend URL up to its port, and the server block it names.
var podURL = regexp.MustCompile(`(backend "openai" "pod" \{\n  url    = "http://127.0.0.1:)(\d+)/v1"\n  server = server.pod\n`)

// Each way a pod fails becomes a failed row naming what Kubernetes said, within the
// stated start timeout, and the run leaves no object behind.
func TestKubernetesFailures(t *testing.T) {
	k8stest.Require(t)
	one := `prompt_tokens = 16
  max_tokens    = 8
  concurrency   = [1]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 4`
	for _, tc := range []struct {
		name, settings string
		// want are substrings of the cluster row's notes.
		want []string
		pod  bool // the row names a pod
	}{
		{"exit code", "", []string{"exit code 4", "a cell failed"}, true},
		{"unschedulable", `start_timeout = "5s"
    resources {
      limits = { "nvidia.com/gpu" = 1 }
    }`, []string{"not started within 5s", "Unschedulable", "Insufficient nvidia.com/gpu"}, true},
		{"image", `image = "planrun:absent"`, []string{"cannot start", "ErrImageNeverPull", "planrun:absent"}, true},
		{"oom", `resources {
      limits = { memory = "10Mi" }
    }`, []string{"OOMKilled"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := k8sPlan(t, tc.settings, one)
			if tc.name == "image" {
				src = strings.Replace(src, `image             = "`+k8stest.Image+`"`, "", 1)
			}
			if tc.name == "oom" {
				// The pod's mock server holds 64 MiB, over the limit whatever planrun's own
				// size (the agent image's build without Kubernetes stays under 10 MiB).
				src = strings.Replace(src, `"-tpot", "5ms"]`, `"-tpot", "5ms", "-hold-mb", "64"]`, 1)
			}
			if tc.name == "exit code" {
				// The pod's backend, without its server, points at a port nothing listens
				// on: every request fails, so the cell fails and the agent exits 4. (With
				// its server the plan would refuse a url off the server's port.)
				src = podURL.ReplaceAllString(src, "${1}1/v1\"\n")
			}
			start := time.Now()
			res, err := runK8s(t, context.Background(), src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range res.Rows {
				if r.Hardware != "cluster" {
					continue
				}
				n++
				t.Logf("%s: %s", tc.name, r.Notes)
				if r.Status != ledger.StatusFailed {
					t.Errorf("c=%d: %s, want failed", r.Concurrency, r.Status)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.Notes, w) {
						t.Errorf("c=%d: the notes do not name %q: %s", r.Concurrency, w, r.Notes)
					}
				}
				if tc.pod && r.Batch.Pod == "" || r.Batch.Job == "" || r.Batch.State != "FAILED" {
					t.Errorf("c=%d: job %q pod %q state %q", r.Concurrency, r.Batch.Job, r.Batch.Pod, r.Batch.State)
				}
			}
			if n != 1 {
				t.Errorf("%d cluster rows, want 1", n)
			}
			if d := time.Since(start); d > 2*time.Minute {
				t.Errorf("the failure took %s to show", d)
			}
			if left := leftOver(t, res.RunDir); len(left) > 0 {
				t.Errorf("the run left objects in the cluster: %v", left)
			}
		})
	}
}

// Ctrl-C while the pod measures deletes the run's Job (its pods first) and ConfigMap, and
// for a cell of several agents its Secret and Service: no object of the run is left, and
// the cell is interrupted.
func TestKubernetesInterruptLeavesNothing(t *testing.T) {
	k8stest.Require(t)
	for _, agents := range []int{1, 2} {
		t.Run(fmt.Sprintf("agents=%d", agents), func(t *testing.T) {
			src := k8sPlan(t, "", fmt.Sprintf(`agents        = %d
  prompt_tokens = 16
  max_tokens    = 32
  concurrency   = [2]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 1000`, agents))
			src = src[:strings.Index(src, `matrix "here"`)] // the cluster's cell alone
			c := clusterClient(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				// Cancel once the pod runs, as a Ctrl-C would.
				for ctx.Err() == nil {
					pods, err := c.CoreV1().Pods(k8stest.Namespace).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelHardware + "=cluster"})
					if err == nil {
						for _, p := range pods.Items {
							if p.Status.Phase == "Running" {
								time.Sleep(2 * time.Second) // requests in flight
								cancel()
								return
							}
						}
					}
					time.Sleep(200 * time.Millisecond)
				}
			}()
			res, err := runK8s(t, ctx, src, Options{Grace: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Interrupted {
				t.Errorf("the run was not interrupted: %+v", res.Cells)
			}
			if left := leftOver(t, res.RunDir); len(left) > 0 {
				t.Errorf("Ctrl-C left objects in the cluster: %v", left)
			}
		})
	}
}

// A context the kubeconfig does not have fails apply before anything is created or
// written, naming the plan's line and the contexts there are.
func TestKubernetesWrongContext(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: lab, context: {cluster: c, user: u}}]
current-context: lab
`), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `
variable "url" { default = "" }
backend "openai" "mock" { url = "http://127.0.0.1:9/v1" }
hardware "cluster" {
  kubernetes {
    kubeconfig = "` + kc + `"
    context    = "prod"
    image      = "planrun:dev"
  }
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1]
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  hardware = [hardware.cluster]
  workload = [workload.w]
}
`
	p, cells := loadPlan(t, src, "")
	results := t.TempDir()
	_, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), ResultsDir: results})
	if err == nil || !strings.Contains(err.Error(), `context "prod" is not in the kubeconfig`) || !strings.Contains(err.Error(), "plan.hcl:7") ||
		!strings.Contains(err.Error(), "its contexts: lab") {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(results); len(entries) > 0 {
		t.Errorf("apply wrote %d entries before failing", len(entries))
	}
}

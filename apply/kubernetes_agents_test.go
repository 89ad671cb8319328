//go:build !nokube

package apply

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/k8stest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement/kube"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cell of several load agents on Kubernetes runs as one Indexed Job of that many
// indices: index 0's pod runs the cell (and agent 0), the other pods are agents 1..N-1,
// which find index 0 through the Job's headless Service and the cluster's DNS (CoreDNS on
// the test cluster). These tests run such cells on the real test cluster; its pods share
// the node's network, so the test reaches the mock server the pod of index 0 starts on
// 127.0.0.1, as the agents of the other pods do.

// k8sAgentsPlan is k8sPlan's cluster cell alone, its workload (one a line) shared by n
// load agents, and the mock's port, which the test can reach.
func k8sAgentsPlan(t *testing.T, n int, workload string) (string, int) {
	t.Helper()
	src := k8sPlan(t, "", fmt.Sprintf("agents = %d\n  %s", n, workload))
	src = src[:strings.Index(src, `matrix "here"`)] // the cluster's cell alone: the agents are its pods
	m := podURL.FindStringSubmatch(src)
	port, err := strconv.Atoi(m[2])
	if err != nil {
		t.Fatalf("the pod's port in %q: %v", m[0], err)
	}
	return src, port
}

// Three agents over an Indexed Job's three pods run the cell's levels: every row is
// ok, from 3 agents with their clocks' bound; the manifest names each agent's pod and
// node; the merged figures recompute exactly (to the ledger's last digit) from the
// agents' records, which index 0 merged into requests.jsonl with their starts already on
// its clock (the agents' own files stay in their pods); the run leaves no object.
func TestKubernetesAgentsAreTheJobsIndices(t *testing.T) {
	k8stest.Require(t)
	const n = 3
	src, _ := k8sAgentsPlan(t, n, `prompt_tokens = uniform(16, 64)
  max_tokens    = uniform(4, 16)
  concurrency   = [3, 6]
  warmup_runs   = 1
  repeat_runs   = 2
  requests      = 30
  seed          = 7`)
	res, err := runK8s(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer logJobFiles(t, res.RunDir)
	if len(res.Rows) != 2 {
		t.Fatalf("rows %+v", res.Rows)
	}
	man := readManifest(t, res.RunDir)
	if len(man.Jobs) != 1 {
		t.Fatalf("manifest kubernetes_jobs %+v", man.Jobs)
	}
	job := man.Jobs[0]
	object := job.ID[strings.Index(job.ID, "/")+1:]
	pods := map[string]bool{}
	for _, a := range man.Agents {
		t.Logf("agent %d: %s, pod %s on %s (host %s), offset %v ± %v", a.Index, a.Where, a.Pod, a.Node, a.Host, a.ClockStart.Offset, a.ClockStart.Bound)
		if a.Where != fmt.Sprintf("kubernetes index %d", a.Index) || !strings.HasPrefix(a.Pod, fmt.Sprintf("%s-%d-", object, a.Index)) ||
			a.Node != k8stest.Node || pods[a.Pod] {
			t.Errorf("agent %d: where %q, pod %q, node %q: want kubernetes index %d, its own pod of Job %s, node %s",
				a.Index, a.Where, a.Pod, a.Node, a.Index, object, k8stest.Node)
		}
		pods[a.Pod] = true
	}
	if len(man.Agents) != n {
		t.Fatalf("manifest agents %+v, want %d", man.Agents, n)
	}
	// The records, as index 0 merged them into requests.jsonl, each with its agent and
	// its start already on the coordinator's clock.
	var cell = res.Cells[0].ID
	perAgent := make([][]ledger.RequestRecord, n)
	for _, r := range readSamples(t, res.RunDir) {
		if r.CellID != cell {
			continue
		}
		if r.Agent == nil || *r.Agent < 0 || *r.Agent >= n {
			t.Fatalf("record %s has agent %v", r.ID, r.Agent)
		}
		perAgent[*r.Agent] = append(perAgent[*r.Agent], r)
	}
	_, cells := loadPlan(t, src, "")
	for _, row := range res.Rows {
		t.Logf("c=%d: %s, %d requests, ttft p50 %.1f ms, clock bound %.3f ms, pod %s; %s", row.Concurrency, row.Status, row.Requests,
			row.TTFT.P50*1e3, row.ClockBoundMs, row.Batch.Pod, row.Notes)
		if row.Status != ledger.StatusOK || row.Agents != n || !(row.ClockBoundMs > 0) || row.Requests != 60 {
			t.Fatalf("c=%d: status %s, agents %d, clock bound %v ms, %d requests: want ok from %d agents, a bound, 60 requests",
				row.Concurrency, row.Status, row.Agents, row.ClockBoundMs, row.Requests, n)
		}
		if row.Batch.Job != job.ID || !strings.HasPrefix(row.Batch.Pod, object+"-0-") || row.Batch.Node != k8stest.Node || row.Batch.State != "COMPLETE" {
			t.Errorf("c=%d: job %q pod %q node %q state %q: want index 0's pod of %s", row.Concurrency, row.Batch.Job, row.Batch.Pod, row.Batch.Node, row.Batch.State, job.ID)
		}
		sent := 0
		for i := range perAgent {
			for _, r := range perAgent[i] {
				if r.Concurrency == row.Concurrency && !r.Warmup {
					sent++
					break
				}
			}
		}
		if sent != n {
			t.Errorf("c=%d: %d agents sent measured requests, want %d", row.Concurrency, sent, n)
		}
		// The row came back through the pod's results.csv: the recomputation is held to it
		// as the ledger records it, to the digit.
		checkRecomputed(t, row, asRecorded(t, recomputeRow(t, cells[0], row, perAgent, nil)))
	}
	if left := leftOver(t, res.RunDir); len(left) > 0 {
		t.Errorf("the run left objects in the cluster: %v", left)
	}
}

// An agent's pod deleted while the level runs (as kubectl delete pod or a drain would)
// fails the cell: its row names the agent by its index, with what Kubernetes said about
// its pod, and the run leaves no object.
func TestKubernetesAgentPodLostFailsTheCell(t *testing.T) {
	k8stest.Require(t)
	src, port := k8sAgentsPlan(t, 2, `prompt_tokens = 16
  max_tokens    = 32
  concurrency   = [4]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 400`)
	c := clusterClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deleted := make(chan string, 1)
	go func() {
		// Once the mock has streamed 40 requests' tokens (the level's, for there is no
		// warm-up: a tenth of it), delete index 1's pod.
		for ctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			if tokens := mockTokens(ctx, port); tokens < 40*32 {
				continue
			}
			pods, err := c.CoreV1().Pods(k8stest.Namespace).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelHardware + "=cluster," +
				batchv1.JobCompletionIndexAnnotation + "=1"})
			if err != nil || len(pods.Items) != 1 {
				continue
			}
			name := pods.Items[0].Name
			if err := c.CoreV1().Pods(k8stest.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
				deleted <- name
			}
			return
		}
	}()
	res, err := runK8s(t, ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer logJobFiles(t, res.RunDir)
	var pod string
	select {
	case pod = <-deleted:
	default:
		t.Fatalf("index 1's pod was never deleted: rows %+v", res.Rows)
	}
	if len(res.Rows) != 1 || len(res.Cells) != 1 {
		t.Fatalf("rows %+v, cells %+v", res.Rows, res.Cells)
	}
	row, cell := res.Rows[0], res.Cells[0]
	t.Logf("row: %s %q", row.Status, row.Notes)
	for _, want := range []string{"agent 1 (kubernetes index 1", "index 1 (agent 1): pod " + pod + " on " + k8stest.Node + " deleted at "} {
		if !strings.Contains(row.Notes, want) {
			t.Errorf("the row's notes do not say %q", want)
		}
	}
	if row.Status != ledger.StatusFailed || row.Requests != 0 || row.Batch.State != "FAILED" {
		t.Errorf("row %s with %d requests, state %s: want failed, without figures", row.Status, row.Requests, row.Batch.State)
	}
	if cell.Status != ledger.StatusFailed || !strings.Contains(cell.Notes, "agent 1") {
		t.Errorf("cell %s %q", cell.Status, cell.Notes)
	}
	if left := leftOver(t, res.RunDir); len(left) > 0 {
		t.Errorf("the run left objects in the cluster: %v", left)
	}
}

// asRecorded is the row as a ledger records it: written to results.csv and read back.
func asRecorded(t *testing.T, r ledger.Row) ledger.Row {
	t.Helper()
	path := filepath.Join(t.TempDir(), ledger.ResultsFile)
	l, err := ledger.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := ledger.ReadLedgerAll(path)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows read back: %v", len(rows), err)
	}
	return rows[0]
}

// logJobFiles logs the end of each job's pod log and agent logs of a test that failed.
func logJobFiles(t *testing.T, runDir string) {
	if !t.Failed() {
		return
	}
	files, _ := filepath.Glob(filepath.Join(runDir, "kubernetes", "*", "*.log"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		t.Logf("%s ends:\n%s", f, b)
	}
}

var generationTokens = regexp.MustCompile(`(?m)^vllm:generation_tokens_total\{[^}]*\} (\S+)$`)

// mockTokens is how many tokens the mock server on port has streamed (its vLLM-style
// counter), 0 while it does not answer.
func mockTokens(ctx context.Context, port int) float64 {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := generationTokens.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			return v
		}
	}
	return 0
}

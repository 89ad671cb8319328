package apply

// Against the real vLLM (internal/testkit/vllmtest's shared server, --max-model-len
// vllmtest.MaxModelLen): a cell whose requests would not fit the context vLLM states in
// /v1/models fails with a message naming the lengths and the limit, before any of its
// requests is sent. A recording proxy sees every request that reaches vLLM, and vLLM's
// own /metrics counters confirm the server handled nothing else.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/gatewaytest"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
	"github.com/planrun/planrun/telemetry/gpu"
)

const vllmContextPlan = `
variable "url" { type = string }
backend "openai" "vllm" {
  url               = "${var.url}/v1"
  api               = "chat"
  engine_extensions = true
}
workload "w" {
  prompt_tokens = %d
  max_tokens    = 32
  concurrency   = 1
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
  temperature   = 0
  seed          = 42
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  workload = [workload.w]
  model_id = "tiny"
}
`

// vllmCounter sums a Prometheus counter over its label sets in one scrape of vLLM's /metrics.
func vllmCounter(t *testing.T, s *vllmtest.Server, name string) float64 {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum, seen := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok && (rest[0] == '{' || rest[0] == ' ') {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", line, err)
			}
			sum, seen = sum+v, true
		}
	}
	if !seen {
		t.Fatalf("/metrics has no %s", name)
	}
	return sum
}

func TestRealVLLMRefusesLengthsPastMaxModelLen(t *testing.T) {
	s := vllmtest.Shared(t)
	tap := gatewaytest.NewTap(t, s.URL)
	successBefore := vllmCounter(t, s, "vllm:request_success_total")
	promptBefore := vllmCounter(t, s, "vllm:prompt_tokens_total")

	const promptTokens = vllmtest.MaxModelLen - 12 // + 32 output: 20 tokens past the context
	p, cells := loadPlan(t, fmt.Sprintf(vllmContextPlan, promptTokens), tap.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`asks for requests of up to %d tokens (%d prompt + 32 output), past the %d-token context the server gives model "tiny"`,
		promptTokens+32, promptTokens, vllmtest.MaxModelLen)
	if len(res.Cells) != 1 || res.Cells[0].Status != ledger.StatusFailed || !strings.Contains(res.Cells[0].Notes, want) {
		t.Fatalf("cells = %+v, want failed with %q", res.Cells, want)
	}
	if b, err := os.ReadFile(filepath.Join(res.RunDir, "requests.jsonl")); len(b) > 0 {
		t.Fatalf("requests recorded for a cell refused before sending (%v):\n%s", err, b)
	}

	// What reached vLLM: the model list and the probe's one 2-token request, nothing of the workload.
	generations := 0
	for _, ex := range tap.Exchanges() {
		if !strings.HasSuffix(ex.Path, "completions") {
			continue
		}
		generations++
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.Unmarshal(ex.Body, &body); err != nil || body.MaxTokens != 2 {
			t.Errorf("vLLM got a request other than the 2-token probe: %s %s", ex.Path, ex.Body)
		}
	}
	successes := vllmCounter(t, s, "vllm:request_success_total") - successBefore
	prompted := vllmCounter(t, s, "vllm:prompt_tokens_total") - promptBefore
	t.Logf("through the proxy: %d generation requests; vLLM's counters: +%.0f requests, +%.0f prompt tokens", generations, successes, prompted)
	if generations > 1 || successes != float64(generations) || prompted >= promptTokens {
		t.Errorf("vLLM handled %.0f requests (%.0f prompt tokens), %d through the proxy: want at most the probe, far under %d prompt tokens",
			successes, prompted, generations, promptTokens)
	}
}

// checkpointDigest is the digest of a checkpoint directory computed here from its
// files (name, size, SHA-256 of config.json and model.safetensors, in name order), as
// package weights documents it.
func checkpointDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	for _, name := range []string{"config.json", tinymodel.HFWeightsName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%s\x00%d\x00%x\n", name, len(b), sum)
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// vLLM reports no digest, only the weights path it loaded (/v1/models' root). A run
// against a vLLM on this machine records that path and the digest of the checkpoint's
// files; two runs of one checkpoint then say "same weights" beside what else changed.
func TestRealVLLMWeightsDigest(t *testing.T) {
	s := vllmtest.Shared(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the digest cache of this test only
	want := checkpointDigest(t, s.ModelDir)
	var runs []string
	for _, maxTokens := range []string{"max_tokens    = 32", "max_tokens    = 8"} {
		src := strings.Replace(fmt.Sprintf(vllmContextPlan, 16), "max_tokens    = 32", maxTokens, 1)
		p, cells := loadPlan(t, src, s.URL)
		res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
		if err != nil || len(res.Cells) != 1 || res.Cells[0].Status != ledger.StatusOK {
			t.Fatalf("apply: %+v, %v", res, err)
		}
		m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if root, d := m.ModelRoots["openai.vllm tiny"], m.ModelDigests["openai.vllm tiny"]; root != s.ModelDir || d != want {
			t.Fatalf("manifest: weights %q, digest %q; want %q, %q", root, d, s.ModelDir, want)
		}
		runs = append(runs, res.RunDir)
	}
	var envs []history.Env
	for _, dir := range runs {
		set, err := history.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := set.RunAt(dir)
		if err != nil || len(r.Rows) != 1 {
			t.Fatalf("run %s: %+v, %v", dir, r, err)
		}
		envs = append(envs, history.EnvOf(r.Rows[0], r.Manifest))
	}
	if got := history.Explain(envs[0], envs[1]); !strings.Contains(got, "same weights, settings: max_tokens 32 → 8") {
		t.Errorf("from the first run to the second: %q", got)
	}
}

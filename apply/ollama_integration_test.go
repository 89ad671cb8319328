package apply

// End to end against a real server: apply runs a plan on the pinned Ollama with
// the tiny model, through its native API and its OpenAI-compatible /v1, and every output
// must be written and agree with the server's own counts.

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/testkit/k8stest"
	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/testkit/slurmtest"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/telemetry/gpu"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv("PLANRUN_TEST_MOCK_SERVER"); addr != "" {
		serveMockChild(addr) // this process is a plan-managed server in servers_test.go
		return
	}
	if os.Getenv("PLANRUN_TEST_AGENT") != "" {
		os.Exit(serveTestAgent()) // this process is a load agent in agents_test.go
	}
	code := ollamatest.Main(m)
	if err := vllmtest.StopShared(); err != nil { // the vLLM tests' server, if one ran
		fmt.Fprintln(os.Stderr, "vllmtest:", err)
		code = 1
	}
	slurmtest.Release() // the Slurm tests' cluster, if this process was the last to use it
	k8stest.Release()   // the Kubernetes tests' cluster, likewise
	os.Exit(code)
}

// realOllama is the test binary's real Ollama (the pinned Ollama with the tiny model).
func realOllama(t *testing.T) *ollamatest.Server { return ollamatest.Shared(t) }

const realPlan = `
variable "url" { type = string }
backend "ollama" "real" { url = var.url }
backend "openai" "real" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 32
  max_tokens    = 16
  concurrency   = [1, 2]
  warmup_runs   = 1
  repeat_runs   = 2
  requests      = 2
}
matrix "tiny" {
  model    = ["tiny"]
  tool     = [backend.ollama.real, backend.openai.real]
  workload = [workload.w]
  model_id = "tiny"
}
`

func TestRealOllamaApply(t *testing.T) {
	s := realOllama(t)
	p, cells := loadPlan(t, realPlan, s.URL)
	if len(cells) != 2 {
		t.Fatalf("%d cells, want ollama and openai", len(cells))
	}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if ok, failed, interrupted, skipped := res.Counts(); ok != 2 || failed+interrupted+skipped != 0 {
		t.Fatalf("cells ok=%d failed=%d interrupted=%d skipped=%d", ok, failed, interrupted, skipped)
	}

	// requests.jsonl: 2 cells × 2 levels × (1 warm-up + 2 measured) runs × 2 requests.
	recs := readSamples(t, res.RunDir)
	if len(recs) != 24 {
		t.Fatalf("requests.jsonl: %d records (want 24)", len(recs))
	}
	type level struct {
		cell string
		c    int
	}
	serverTokens := map[level]int{}
	for _, r := range recs {
		if !r.OK() {
			t.Fatalf("request %s of %s failed: %v", r.ID, r.CellID, r.Err)
		}
		if r.Warmup {
			continue
		}
		k := level{r.CellID, r.Concurrency}
		switch r.TokenSource {
		case backends.TokensServer: // native: the done line's eval_count
			if r.Server == nil || r.Server.EvalCount != r.OutputTokens {
				t.Fatalf("%s: output tokens %d, server timings %+v", r.ID, r.OutputTokens, r.Server)
			}
			serverTokens[k] += r.Server.EvalCount
		case backends.TokensUsage: // /v1: usage.completion_tokens is what OutputTokens holds
			serverTokens[k] += r.OutputTokens
		default:
			t.Fatalf("%s: token source %q: a real Ollama always reports its count", r.ID, r.TokenSource)
		}
		// A chunk carries at least one token. The random tiny model may also stop after
		// tokens that decode to no text (eval_count 2, no content line): no TTFT then.
		if r.Chunks > r.OutputTokens {
			t.Fatalf("%s %s: %d chunks for %d tokens", r.CellID, r.ID, r.Chunks, r.OutputTokens)
		}
		if _, ok := r.TTFT(); ok != (r.Chunks > 0) {
			t.Fatalf("%s %s: TTFT defined %v with %d chunks", r.CellID, r.ID, ok, r.Chunks)
		}
		if r.Chunks == 0 {
			t.Logf("%s %s: %d tokens, no content chunk (finish %q)", r.CellID, r.ID, r.OutputTokens, r.FinishReason)
		}
	}

	if len(res.Rows) != 4 {
		t.Fatalf("%d rows, want 2 cells × 2 levels", len(res.Rows))
	}
	for _, r := range res.Rows {
		t.Logf("%s c=%d: %d/%d ok, tokens %d (%s, %.2f/chunk, %d early stops), prompt %d→%.1f, TTFT p50 %.2fms, TPOT p50 %.3fms, E2E p50 %.2fms, %.0f tok/s, stability %s",
			r.CellID, r.Concurrency, r.Succeeded, r.Requests, r.OutputTokens, r.TokenSource, r.TokensPerChunk, r.EarlyStops,
			r.PromptTokensRequested, r.PromptTokensActual, r.TTFT.P50*1e3, r.TPOT.P50*1e3, r.E2E.P50*1e3, r.OutputTokS, r.Stability)
		if r.Status != ledger.StatusOK || r.Requests != 4 || r.Succeeded != 4 || r.Failed != 0 {
			t.Errorf("%s c=%d: status %s, %d/%d ok, %d failed", r.CellID, r.Concurrency, r.Status, r.Succeeded, r.Requests, r.Failed)
		}
		if want := serverTokens[level{r.CellID, r.Concurrency}]; r.OutputTokens != want || want == 0 {
			t.Errorf("%s c=%d: row output tokens %d, the server's counts in requests.jsonl sum to %d", r.CellID, r.Concurrency, r.OutputTokens, want)
		}
		wantSource := string(backends.TokensUsage)
		if strings.HasPrefix(r.Tool, "ollama.") {
			wantSource = string(backends.TokensServer)
		}
		if r.TokenSource != wantSource {
			t.Errorf("%s: token source %q, want %q", r.Tool, r.TokenSource, wantSource)
		}
		if r.PromptTokensRequested != 32 || math.Abs(r.PromptTokensActual-32) > 2 {
			t.Errorf("%s c=%d: prompt tokens %d → %v on the server's count, want within ±2 of 32", r.CellID, r.Concurrency, r.PromptTokensRequested, r.PromptTokensActual)
		}
		if !(r.TTFT.P50 > 0 && r.TTFT.P50 < r.E2E.P50) || !(r.TPOT.P50 > 0) || !(r.OutputTokS > 0) {
			t.Errorf("%s c=%d: TTFT p50 %v, E2E p50 %v, TPOT p50 %v, %v tok/s", r.CellID, r.Concurrency, r.TTFT.P50, r.E2E.P50, r.TPOT.P50, r.OutputTokS)
		}
		// The tiny model holds its EOS down (tinymodel.holdEOS), so every request runs to
		// max_tokens and the level times a whole decode.
		if r.EarlyStops != 0 || r.OutputTokens != 16*r.Requests {
			t.Errorf("%s c=%d: %d early stops, %d tokens from %d requests of 16", r.CellID, r.Concurrency, r.EarlyStops, r.OutputTokens, r.Requests)
		}
		if r.TokensPerChunk < 1 {
			t.Errorf("%s: %v tokens per chunk: a chunk carries at least one token", r.CellID, r.TokensPerChunk)
		}
	}

	// The ledger and the run's own CSV: valid CSV, header plus one row per cell × level.
	for _, path := range []string{res.LedgerPath, filepath.Join(res.RunDir, "results.csv")} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
		if err != nil || len(recs) != 1+4 {
			t.Errorf("%s: %d records, %v (want header + 4)", path, len(recs), err)
		}
	}
	ledgerRows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(ledgerRows) != 4 {
		t.Errorf("ledger: %d rows, %v", len(ledgerRows), err)
	}

	md, err := os.ReadFile(res.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ollama.real", "openai.real", "(E2E − TTFT) / (output tokens − 1)", ollamatest.PinnedVersion} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	// The manifest names the server version and the model's digest as the server lists it.
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ServerVersions["ollama.real"] != ollamatest.PinnedVersion || m.ServerVersions["openai.real"] != ollamatest.PinnedVersion {
		t.Errorf("manifest server versions %v, want %s for both tools", m.ServerVersions, ollamatest.PinnedVersion)
	}
	digest := s.Digest(t, "tiny:latest")
	if got := m.ModelDigests["ollama.real tiny"]; got != digest {
		t.Errorf("manifest model digests %v, want %q for ollama.real tiny (from /api/tags)", m.ModelDigests, digest)
	}
	if m.PlanHash != p.Hash || m.Ended.IsZero() {
		t.Errorf("manifest plan hash %q (want %q), ended %v", m.PlanHash, p.Hash, m.Ended)
	}
}

// Ollama cuts a prompt past num_ctx without a word (prompt_eval_count stops at it), so a
// workload past the context must fail its cell before any request: the tiny model's
// Modelfile sets num_ctx 512. With num_ctx raised in the request options the same
// workload runs, and the server counts the whole prompt.
func TestRealOllamaRefusesLengthsPastNumCtx(t *testing.T) {
	s := realOllama(t)
	plan := strings.NewReplacer(`backend "openai" "real" { url = "${var.url}/v1" }`, "",
		"tool     = [backend.ollama.real, backend.openai.real]", "tool     = [backend.ollama.real]",
		"prompt_tokens = 32", "prompt_tokens = 600", "max_tokens    = 16", "max_tokens    = 4",
		"concurrency   = [1, 2]", "concurrency   = 1", "warmup_runs   = 1", "warmup_runs   = 0",
		"repeat_runs   = 2", "repeat_runs   = 1").Replace(realPlan)
	p, cells := loadPlan(t, plan, s.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `asks for requests of up to 604 tokens (600 prompt + 4 output), past the 512-token context the server gives model "tiny"`
	if len(res.Cells) != 1 || res.Cells[0].Status != ledger.StatusFailed || !strings.Contains(res.Cells[0].Notes, want) {
		t.Fatalf("cells = %+v, want failed with %q", res.Cells, want)
	}
	if b, err := os.ReadFile(filepath.Join(res.RunDir, "requests.jsonl")); len(b) > 0 {
		t.Fatalf("requests recorded for a cell refused before sending (%v):\n%s", err, b)
	}

	raised := strings.Replace(plan, `backend "ollama" "real" { url = var.url }`,
		`backend "ollama" "real" {
  url          = var.url
  extra_fields = { options = { num_ctx = 1024 } }
}`, 1)
	p, cells = loadPlan(t, raised, s.URL)
	res, err = Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Status != ledger.StatusOK || len(res.Rows) != 1 {
		t.Fatalf("with num_ctx 1024: cells = %+v", res.Cells)
	}
	if got := res.Rows[0].PromptTokensActual; got < 570 || got > 630 {
		t.Fatalf("with num_ctx 1024 the server counted %.0f prompt tokens, want about 600 (not cut at 512)", got)
	}
}

// The acceptance check of embeddings on a real server: an embeddings cell against the
// pinned Ollama (/api/embed, and its /v1/embeddings through an openai backend) reports the
// server's own input tokens exactly: each row's input tokens are the sum of the
// prompt_eval_count / usage.prompt_tokens of its requests, its inputs the embeddings the
// server returned, and each input was built to input_tokens by the server's count.
func TestRealOllamaEmbeddingsCell(t *testing.T) {
	s := realOllama(t)
	const src = `
variable "url" { type = string }
backend "ollama" "embed" {
  url = var.url
  api = "embeddings"
}
backend "openai" "embed" {
  url = "${var.url}/v1"
  api = "embeddings"
}
workload "embed" {
  warmup_runs = 0
  repeat_runs = 1
  requests    = 3
  embeddings {
    inputs       = [2]
    input_tokens = [24]
  }
}
matrix "tiny" {
  model    = ["tiny"]
  tool     = [backend.ollama.embed, backend.openai.embed]
  workload = [workload.embed]
  model_id = "tiny"
}
`
	p, cells := loadPlan(t, src, s.URL)
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	byCell := map[string]int{}
	for _, r := range recs {
		if r.Err != nil || r.Inputs != 2 || r.PromptTokens == 0 {
			t.Fatalf("%s: error %v, inputs %d, input tokens %d", r.ID, r.Err, r.Inputs, r.PromptTokens)
		}
		byCell[r.CellID] += r.PromptTokens
	}
	for _, row := range res.Rows {
		if row.Status != "ok" || row.InputTokens != byCell[row.CellID] || row.InputsTotal != 6 || row.TTFT.N != 0 {
			t.Errorf("%s: status %s, input tokens %d (the server's: %d), inputs %d, TTFT n %d: %s",
				row.CellID, row.Status, row.InputTokens, byCell[row.CellID], row.InputsTotal, row.TTFT.N, row.Notes)
		}
		if per := float64(row.InputTokens) / 6; per < 20 || per > 28 {
			t.Errorf("%s: %.1f input tokens per input, want about 24 (%s)", row.CellID, per, row.Notes)
		}
		t.Logf("%s: %d input tokens over %d inputs, %.1f inputs/s, latency p50 %.3fs", row.CellID, row.InputTokens, row.InputsTotal, row.InputsPerSec, row.E2E.P50)
	}
}

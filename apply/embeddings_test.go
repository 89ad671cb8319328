package apply

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

const embeddingsPlan = `
variable "url" { type = string }
backend "openai" "embed" {
  url = "${var.url}/v1"
  api = "embeddings"
}
backend "ollama" "embed" {
  url = var.url
  api = "embeddings"
}
workload "embed" {
  concurrency = [2]
  warmup_runs = 0
  repeat_runs = 2
  requests    = 4
  embeddings {
    inputs       = [1, 4]
    input_tokens = [8, 32]
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.embed, backend.ollama.embed]
  workload = [workload.embed]
  model_id = "mock"
}
`

// An embeddings workload runs its two axes (inputs per request × input length) as levels,
// against OpenAI's /v1/embeddings and Ollama's /api/embed: each row counts the inputs the
// server embedded and its own input tokens, has latency but no TTFT, and its summary.json
// row and report table carry the embeddings figures and never TTFT.
func TestEmbeddingsWorkload(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, embeddingsPlan, srv.URL)
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 8 {
		t.Fatalf("%d rows, want 2 cells × 2 inputs × 2 lengths", len(res.Rows))
	}
	tokens := map[string]int{} // the server's input tokens per row, from requests.jsonl
	for _, r := range recs {
		if r.Err != nil || !r.Unstreamed || len(r.ChunkArrivals) != 0 || r.OutputTokens != 0 {
			t.Fatalf("%s: error %v, unstreamed %v, arrivals %v, output tokens %d", r.ID, r.Err, r.Unstreamed, r.ChunkArrivals, r.OutputTokens)
		}
		tokens[r.CellID+"|"+strings.Split(r.ID, "/")[0]] += r.PromptTokens
	}
	for _, row := range res.Rows {
		if row.Status != "ok" || row.Requests != 8 || row.InputsTotal != 8*row.Inputs || row.Inputs == 0 {
			t.Errorf("%s inputs %d: status %s, %d requests, %d inputs embedded", row.CellID, row.Inputs, row.Status, row.Requests, row.InputsTotal)
		}
		// Each input is filler fitted to input_tokens by the server's count (the mock's
		// words): the row's input tokens are the server's, within a word per input.
		want := 8 * row.Inputs * row.InputTokensPerInput
		if d := row.InputTokens - want; d < -8*row.Inputs || d > 8*row.Inputs {
			t.Errorf("%s inputs %d len %d: %d input tokens, want about %d", row.CellID, row.Inputs, row.InputTokensPerInput, row.InputTokens, want)
		}
		if !(row.InputsPerSec > 0) || !(row.InputTokS > row.InputsPerSec) || !(row.E2E.P50 >= 0.005) || row.TTFT.N != 0 || row.OutputTokens != 0 {
			t.Errorf("%s: inputs/s %v, input tok/s %v, latency p50 %v, TTFT n %d, output tokens %d", row.CellID,
				row.InputsPerSec, row.InputTokS, row.E2E.P50, row.TTFT.N, row.OutputTokens)
		}
	}
	sum := 0
	for _, n := range tokens {
		sum += n
	}
	rowSum := 0
	for _, row := range res.Rows {
		rowSum += row.InputTokens
	}
	if sum != rowSum {
		t.Errorf("rows count %d input tokens, the samples' server counts %d", rowSum, sum)
	}
	raw, err := os.ReadFile(filepath.Join(res.RunDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || len(s.Rows) != 8 {
		t.Fatalf("summary.json: %v, %d rows", err, len(s.Rows))
	}
	for _, r := range s.Rows {
		if _, ok := r["ttft_p50_s"]; ok || r["inputs_s"] == nil || r["input_tok_s"] == nil || r["e2e_p99_s"] == nil {
			t.Errorf("summary.json embeddings row: ttft present %v, inputs_s %v, input_tok_s %v, e2e_p99_s %v", ok, r["inputs_s"], r["input_tok_s"], r["e2e_p99_s"])
		}
	}
	md, _ := os.ReadFile(res.ReportPath)
	if !strings.Contains(string(md), "### Embeddings") || strings.Contains(string(md), "TTFT(s)") || strings.Contains(string(md), "TTFT p50") {
		t.Errorf("report.md: an embeddings section without TTFT wanted:\n%s", md)
	}
}

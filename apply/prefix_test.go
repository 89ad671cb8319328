package apply

import (
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/traffic"
	"github.com/planrun/planrun/servers/mockserver"
)

// examples/prefix-cache.hcl against a mock with a prefix cache: prefix groups lower
// TTFT against the same workload without them, and shared_prefix_pct is what the mock
// found cached, for prefix groups and for a trace's hash blocks alike.
func TestPrefixCacheExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, PrefillPerToken: 20 * time.Microsecond,
		PrefixCache: true, RecordTruth: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/prefix-cache.hcl", "url="+srv.URL+"/v1", "model=mock")
	res, recs := runSamples(t, p, cells)
	rows := map[string]ledger.Row{}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK || r.Succeeded != r.Requests {
			t.Fatalf("%s: status %s, %d/%d ok", r.Workload, r.Status, r.Succeeded, r.Requests)
		}
		rows[r.Workload] = r
	}
	truths := map[string]mockserver.Truth{}
	for _, tr := range mock.Truths() {
		truths[tr.ID] = tr
	}
	for _, name := range []string{"grouped", "plain", "trace"} {
		var cached, prompt, shared int
		for _, r := range recs {
			if r.CellID == rows[name].CellID {
				tr := truths[r.RequestID]
				cached, prompt, shared = cached+tr.CachedTokens, prompt+tr.PromptTokens, shared+r.SharedPrefixTokens
			}
		}
		mockPct := 100 * float64(cached) / float64(prompt)
		got := rows[name].SharedPrefixPct
		if math.Abs(got-mockPct) > 1 || math.Abs(float64(shared-cached)) > 0.01*float64(prompt) {
			t.Errorf("%s: shared_prefix_pct %.2f%% (%d tokens), the mock cached %.2f%% (%d of %d)", name, got, shared, mockPct, cached, prompt)
		}
		t.Logf("%s: shared_prefix_pct %.2f%%, mock cached %.2f%%, TTFT p50 %.1f ms", name, got, mockPct, rows[name].TTFT.P50*1000)
	}
	// 4 groups of 8 per run: 28 of 32 requests share 768 of their 1024 tokens.
	if got := rows["grouped"].SharedPrefixPct; math.Abs(got-65.625) > 1 || rows["plain"].SharedPrefixPct != 0 || rows["trace"].SharedPrefixPct < 20 {
		t.Errorf("shares: grouped %.2f%% (want 65.6), plain %.2f%% (want 0), trace %.2f%%", got, rows["plain"].SharedPrefixPct, rows["trace"].SharedPrefixPct)
	}
	if g, pl := rows["grouped"].TTFT.P50, rows["plain"].TTFT.P50; !(g < 0.6*pl) {
		t.Errorf("TTFT p50 with prefix groups %.1f ms, without %.1f ms: want the cache's benefit", g*1000, pl*1000)
	}
}

const realPrefixPlan = `
variable "url" { type = string }
backend "ollama" "real" { url = var.url }
workload "grouped" {
  prompt_tokens = uniform(150, 400) # the tiny tokenizer takes ~4 tokens a word: probes must aim by its count to stay inside num_ctx 512
  max_tokens    = 2
  concurrency   = 2
  requests      = 8
  warmup_runs   = 0
  repeat_runs   = 1
  seed          = 5
  prefix {
    tokens = 50
    groups = 2
  }
}
matrix "tiny" {
  model    = ["tiny"]
  tool     = [backend.ollama.real]
  workload = [workload.grouped]
  model_id = "tiny"
}
`

// On the real Ollama, prefix-grouped prompts keep their drawn lengths on the server's
// own count: the prefix is inside the length, not added to it.
func TestRealOllamaPrefixLengths(t *testing.T) {
	s := realOllama(t)
	p, cells := loadPlan(t, realPrefixPlan, s.URL)
	res, recs := runSamples(t, p, cells)
	if len(recs) != 8 || res.Rows[0].Succeeded != 8 {
		t.Fatalf("%d measured requests, row %+v", len(recs), res.Rows[0])
	}
	drawn := traffic.DrawShapes(p.Workloads[0], dataset.Sample{})
	var shared, prompt, sharing int
	for _, r := range recs {
		shared, prompt = shared+r.SharedPrefixTokens, prompt+r.PromptTokens
		if r.SharedPrefixTokens > 0 {
			sharing++
			if miss := math.Abs(float64(r.SharedPrefixTokens-50)) / 50; miss > 0.04 {
				t.Errorf("%s: %d shared tokens for a 50-token prefix", r.ID, r.SharedPrefixTokens)
			}
		}
		want := drawn[requestIndex(t, r.ID)].PromptTokens
		t.Logf("%s: the server counted %d prompt tokens, drawn %d, %d shared", r.ID, r.PromptTokens, want, r.SharedPrefixTokens)
		if miss := math.Abs(float64(r.PromptTokens-want)) / float64(want); miss > 0.04 {
			t.Errorf("%s: the server counted %d prompt tokens, drawn %d (%.1f%% off)", r.ID, r.PromptTokens, want, miss*100)
		}
	}
	want := 100 * float64(shared) / float64(prompt)
	if got := res.Rows[0].SharedPrefixPct; sharing != 6 || math.Abs(got-want) > 0.01 {
		t.Errorf("shared_prefix_pct %.2f%%, want Σ shared / Σ prompt = %.2f%%, with 6 of 8 requests sharing (got %d)", got, want, sharing)
	}
}

const levelsPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = var.url }
workload "levels" {
  prompt_tokens = 200
  max_tokens    = 4
  concurrency   = [1, 2]
  requests      = 4
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.levels]
  model_id = "mock"
}
`

// No prompt of one level is a prompt another level (or a rerun) sent: a prefix-caching
// server must find nothing to reuse in a workload without prefix groups. Salted with the
// cell's id alone, the second level repeated the first one's prompts, and the real vLLM
// served 87% of their tokens from its prefix cache.
func TestLevelsAndRerunsSendFreshPrompts(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: time.Millisecond, PrefixCache: true, RecordTruth: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	truths := map[string]mockserver.Truth{}
	var cached, prompt int
	for rerun := range 2 {
		p, cells := loadPlan(t, levelsPlan, srv.URL+"/v1")
		res, recs := runSamples(t, p, cells)
		if len(res.Rows) != 2 {
			t.Fatalf("rows %d", len(res.Rows))
		}
		for _, tr := range mock.Truths() {
			truths[tr.ID] = tr
		}
		// The measured requests of every run so far (the length probes before each cell
		// are outside the measured windows).
		for _, r := range recs {
			tr := truths[r.RequestID]
			cached, prompt = cached+tr.CachedTokens, prompt+tr.PromptTokens
		}
		if prompt == 0 || cached > prompt/20 {
			t.Errorf("after run %d: the mock's prefix cache served %d of %d prompt tokens: prompts were repeated", rerun+1, cached, prompt)
		}
	}
}

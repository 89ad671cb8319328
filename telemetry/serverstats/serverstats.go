// Package serverstats reads what LLM servers say about their own memory, beside NVML:
// Ollama's /api/ps (size and size_vram per loaded model) and vLLM's Prometheus /metrics
// (KV-cache usage, running and waiting requests), sampled over a measured window. For a
// server on another host these are the only VRAM figures planrun has.
package serverstats

import (
	"context"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
)

// DefaultInterval is the polling period when none is given: an HTTP request per tick, so
// slower than the NVML sampler.
const DefaultInterval = 500 * time.Millisecond

// Stat is one figure over the window.
type Stat struct {
	Peak float64 `json:"peak"`
	Mean float64 `json:"mean"`
	N    int     `json:"n"` // readings
	sum  float64
}

func (s *Stat) add(v float64) {
	if s.N == 0 || v > s.Peak {
		s.Peak = v
	}
	s.N++
	s.sum += v
	s.Mean = s.sum / float64(s.N)
}

// ModelMemory is one loaded model's memory over the window, as Ollama reports it: its
// sizes are the peaks of size and size_vram.
type ModelMemory = backends.LoadedModel

// Report is what one server said over a window.
type Report struct {
	Source    string `json:"source"` // "ollama /api/ps", "vllm /metrics" or "dcgm exporter"
	URL       string `json:"url"`
	Polls     int    `json:"polls"`
	Failures  int    `json:"failures"`
	LastError string `json:"last_error,omitempty"`

	// Ollama.
	Models []ModelMemory `json:"models,omitempty"`

	// vLLM. KVCacheUsage is a fraction (1 = full); KVCacheMetric names the series read.
	KVCacheUsage         Stat    `json:"kv_cache_usage"`
	KVCacheMetric        string  `json:"kv_cache_metric,omitempty"`
	RequestsRunning      Stat    `json:"requests_running"`
	RequestsWaiting      Stat    `json:"requests_waiting"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"` // from vllm:cache_config_info
	// What vLLM's counters grew by between the window's first and last scrape: the
	// prefix cache's hits and queries (tokens), and its own per-request histograms.
	PrefixCacheHits    float64     `json:"prefix_cache_hits,omitempty"`
	PrefixCacheQueries float64     `json:"prefix_cache_queries,omitempty"`
	ServerLatency      VLLMLatency `json:"server_latency"`

	// DCGM exporter: per GPU of the host, in the exporter's gpu-label order.
	GPUs []DCGMGPU `json:"gpus,omitempty"`
}

// Poller samples one server during a window.
type Poller struct {
	interval time.Duration
	poll     func(ctx context.Context, r *Report) error
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
	once     sync.Once

	mu     sync.Mutex
	report Report
}

func newPoller(ctx context.Context, source, url string, interval time.Duration, poll func(context.Context, *Report) error) *Poller {
	if interval <= 0 {
		interval = DefaultInterval
	}
	ctx, cancel := context.WithCancel(ctx)
	return &Poller{
		interval: interval,
		poll:     poll,
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
		report:   Report{Source: source, URL: url},
	}
}

// start reads once at once (so a short window has a reading before load peaks) and then
// every interval until Stop.
func (p *Poller) start() *Poller {
	p.pollOnce()
	go func() {
		defer close(p.done)
		tk := time.NewTicker(p.interval)
		defer tk.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-tk.C:
				p.pollOnce()
			}
		}
	}()
	return p
}

func (p *Poller) pollOnce() {
	window := p.ctx
	ctx, cancel := context.WithTimeout(window, max(p.interval, time.Second))
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.poll(ctx, &p.report)
	if err != nil && window.Err() != nil {
		// Stop cut this reading short; the reading Stop takes next stands in for it, so
		// the server is not reported as failing to answer.
		return
	}
	p.report.Polls++
	if err != nil {
		p.report.Failures++
		p.report.LastError = err.Error()
	}
}

// Stop takes a last reading, ends polling and returns the window's report. A server that
// could not be read is not an error: the report counts the failures and keeps the last.
func (p *Poller) Stop() Report {
	p.once.Do(func() {
		p.cancel()
		<-p.done
		p.ctx = context.Background()
		p.pollOnce()
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report
}

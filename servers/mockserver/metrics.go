package mockserver

import (
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// metrics serves the vLLM gauges a client watches for queueing and KV-cache pressure.
// gpu_cache_usage_perc is running/QueueSlots (a fraction, as vLLM reports it), 0 when
// the queue is unbounded.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	running, waiting := s.running.Load(), s.waiting.Load()
	cache := 0.0
	if s.cfg.QueueSlots > 0 {
		cache = float64(running) / float64(s.cfg.QueueSlots)
	}
	st := s.Stats()
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	// One series, for the first model: the mock is one engine, like one vLLM process.
	model := s.modelNames()[0]
	{
		label := []*dto.LabelPair{{Name: ptr("model_name"), Value: ptr(model)}}
		gauge := func(name, help string, v float64) *dto.MetricFamily {
			return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_GAUGE.Enum(),
				Metric: []*dto.Metric{{Label: label, Gauge: &dto.Gauge{Value: &v}}}}
		}
		counter := func(name, help string, v float64) *dto.MetricFamily {
			return &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: dto.MetricType_COUNTER.Enum(),
				Metric: []*dto.Metric{{Label: label, Counter: &dto.Counter{Value: &v}}}}
		}
		for _, mf := range []*dto.MetricFamily{
			gauge("vllm:num_requests_running", "Number of requests currently running on GPU.", float64(running)),
			gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(waiting)),
			gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", cache),
			counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", float64(st.PromptTokens)),
			counter("vllm:generation_tokens_total", "Number of generation tokens processed.", float64(st.OutputTokens)),
		} {
			if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
				return
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

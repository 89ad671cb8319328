package mockserver

import (
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// metrics serves the vLLM gauges a client watches for queueing and KV-cache pressure.
// gpu_cache_usage_perc is running/QueueSlots (a fraction, as vLLM reports it), 0 when
// the queue is unbounded. With QueueSlots, request_queue_time_seconds is each admitted
// request's wait for a slot (its sum and count, one +Inf bucket), as vLLM's histogram of
// the time from arrival to first scheduling.
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
		families := []*dto.MetricFamily{
			gauge("vllm:num_requests_running", "Number of requests currently running on GPU.", float64(running)),
			gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(waiting)),
			gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", cache),
			counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", float64(st.PromptTokens)),
			counter("vllm:generation_tokens_total", "Number of generation tokens processed.", float64(st.OutputTokens)),
		}
		if s.slots != nil {
			n, sum := uint64(s.queuedN.Load()), float64(s.queuedNs.Load())/1e9
			families = append(families, &dto.MetricFamily{Name: ptr("vllm:request_queue_time_seconds"),
				Help: ptr("Histogram of time spent in WAITING phase for request."), Type: dto.MetricType_HISTOGRAM.Enum(),
				Metric: []*dto.Metric{{Label: label, Histogram: &dto.Histogram{SampleCount: &n, SampleSum: &sum,
					Bucket: []*dto.Bucket{{UpperBound: ptr(math.Inf(1)), CumulativeCount: &n}}}}}})
		}
		for _, mf := range families {
			if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
				return
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

package ledger

import (
	"math"
	"slices"

	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/stats"
)

// ResultField is one name an expect or goal condition may read as result.<Name>: its
// type, unit and how it is read from a row. Plan validation type-checks conditions
// against Type, and apply evaluates them with Value, so the two cannot drift apart.
type ResultField struct {
	Name string
	Type cty.Type // cty.String or cty.Number
	Unit string   // "" for names and counts
	Doc  string
	// Value reads the field; a figure that was not measured is null, so a condition on
	// it fails with a clear message instead of comparing against zero.
	Value func(*Row) cty.Value
}

// ResultFields are the fields of result.*, in the order they are documented.
var ResultFields = slices.Concat(rowFields, distFields(), figureFields, reasoningFields, embeddingsFields, intervalFields(),
	memoryFields, costFields, qualityFields, agenticFields, insideFields, energyFields)

// rowFields say what produced a row.
var rowFields = []ResultField{
	strField("cell", "the cell id", func(r *Row) string { return r.CellID }),
	strField("model", "the matrix's model", func(r *Row) string { return r.Model }),
	strField("model_id", "the name the server knows the model by", func(r *Row) string { return r.ModelID }),
	strField("quantization", "the matrix's quantization", func(r *Row) string { return r.Quantization }),
	strField("tool", "the backend, kind.name", func(r *Row) string { return r.Tool }),
	strField("hardware", "the hardware block's name", func(r *Row) string { return r.Hardware }),
	strField("workload", "the workload's name", func(r *Row) string { return r.Workload }),
	intField("concurrency", "requests in flight", func(r *Row) int { return r.Concurrency }),
	intField("requests", "measured requests", func(r *Row) int { return r.Requests }),
	intField("failed", "failed requests", func(r *Row) int { return r.Failed }),
	numField("error_rate", "", "failed / requests", 1, errorRate),
	strField("stability", "stable, noisy, unstable or single-run: the worst headline figure's spread across runs", func(r *Row) string { return r.Stability }),
	strField("stability_figure", "the figure stability judged worst: ttft (e2e for embeddings), tpot or throughput", func(r *Row) string { return r.StabilityFigure }),
}

// distFields are p50, p90, p95, p99, mean and std of each latency distribution, in the
// units the ledger uses (TTFT and E2E in s, TPOT and ITL in ms).
func distFields() []ResultField {
	var out []ResultField
	for _, d := range slices.Concat(LatencyDists, reasoningDists, toolDists) {
		stat := []struct {
			name, doc string
			get       func(*stats.Dist) float64
		}{
			{"p50", "median", func(x *stats.Dist) float64 { return x.P50 }},
			{"p90", "p90", func(x *stats.Dist) float64 { return x.P90 }},
			{"p95", "p95", func(x *stats.Dist) float64 { return x.P95 }},
			{"p99", "p99", func(x *stats.Dist) float64 { return x.P99 }},
			{"mean", "mean", func(x *stats.Dist) float64 { return x.Mean }},
			{"std", "standard deviation of", func(x *stats.Dist) float64 { return x.Std }},
		}
		for _, st := range stat {
			get := d.Get
			out = append(out, numField(d.Prefix+"_"+st.name+"_"+d.Unit, d.Unit, st.doc+" "+d.Doc, d.Scale,
				func(r *Row) float64 { return st.get(get(r)) }))
		}
	}
	return out
}

// figureFields are the level's throughput, memory, SLO and client figures.
var figureFields = []ResultField{
	numField("output_tok_s", "tokens/s", "output throughput of the level", 1, func(r *Row) float64 { return r.OutputTokS }),
	numField("requests_s", "requests/s", "request throughput of the level", 1, func(r *Row) float64 { return r.RequestsPerSec }),
	numField("decode_tok_s", "tokens/s", "median per-request decode rate", 1, func(r *Row) float64 { return r.DecodeRate.P50 }),
	numField("vram_peak_gb", "GB", "peak GPU memory in use during the level", 1, func(r *Row) float64 { return r.VRAMPeakGB }),
	numField("vram_baseline_gb", "GB", "GPU memory in use before load", 1, func(r *Row) float64 { return r.VRAMBaselineGB }),
	numField("slo_attainment_pct", "%", "requests meeting every limit of the workload's slo", 1, func(r *Row) float64 { return r.SLOAttainmentPct }),
	numField("goodput_requests_s", "requests/s", "requests/s of the requests meeting the slo", 1, func(r *Row) float64 { return r.GoodputReqS }),
	numField("goodput_tok_s", "tokens/s", "output tokens/s of the requests meeting the slo", 1, func(r *Row) float64 { return r.GoodputTokS }),
	intField("new_connections", "requests that opened a connection (cold or dropped keep-alive)", func(r *Row) int { return r.NewConnections }),
	numField("conn_setup_max_ms", "ms", "longest connection set-up (inside that request's TTFT)", 1000, func(r *Row) float64 { return r.ConnectSetup.Max }),
	numField("send_delay_p50_ms", "ms", "median client send delay: start stamp to request written, less set-up", 1000, func(r *Row) float64 { return r.SendDelay.P50 }),
	numField("send_delay_p99_ms", "ms", "p99 client send delay", 1000, func(r *Row) float64 { return r.SendDelay.P99 }),
	numField("session_duration_p50_s", "s", "median duration of a session workload's completed sessions, think times included", 1, sessionDurationP50),
	intField("turns_not_sent", "turns of a session workload never sent because an earlier turn of their session failed", func(r *Row) int {
		if r.Sessions == nil {
			return 0
		}
		return r.Sessions.TurnsNotSent
	}),
	numField("shared_prefix_pct", "%", "prompt tokens that were a prefix an earlier request of the run already sent", 1, func(r *Row) float64 { return r.SharedPrefixPct }),
	numField("send_lag_p99_ms", "ms", "p99 of how late open-loop or replayed requests were sent against their schedule", 1000, func(r *Row) float64 { return r.SendLag.P99 }),
	numField("send_lag_max_ms", "ms", "most any open-loop or replayed request was sent behind its schedule", 1000, func(r *Row) float64 { return r.SendLag.Max }),
	numField("send_lag_p50_ms", "ms", "median of how late open-loop or replayed requests were sent against their schedule", 1000, func(r *Row) float64 { return r.SendLag.P50 }),
	numField("client_cpu_pct", "%", "planrun's own CPU use over the measured window (100 = one core)", 1, func(r *Row) float64 { return r.ClientCPUPct }),
	numField("client_lag_p99_ms", "ms", "p99 of how long planrun's goroutines waited, runnable, before running", 1, func(r *Row) float64 { return r.ClientLagP99Ms }),
	strField("fidelity", "ok, short, client-bound or late: the load delivered against the load asked, and how late it was sent", func(r *Row) string { return r.Fidelity }),
	numField("fidelity_shortfall_pct", "%", "how far the delivered load fell below the asked load (negative: above)", 1, func(r *Row) float64 { return r.FidelityShortfallPct }),
	numField("delivered_mean_in_flight", "requests", "time-weighted mean of requests in flight over the measured window", 1, func(r *Row) float64 { return r.InFlightMean }),
	numField("delivered_p99_in_flight", "requests", "time-weighted p99 of requests in flight over the measured window", 1, func(r *Row) float64 { return r.InFlightP99 }),
	numField("delivered_max_in_flight", "requests", "most requests in flight at any instant of the window", 1, func(r *Row) float64 { return r.InFlightMax }),
	numField("delivered_held_in_flight", "requests", "time-weighted mean in flight while a closed loop had work for every slot", 1, func(r *Row) float64 { return r.InFlightHeld }),
	numField("delivered_idle_in_flight", "requests", "time-weighted mean of slots idle between requests in that span: the client's own turnaround", 1, func(r *Row) float64 { return r.InFlightIdle }),
	numField("rate_scheduled_per_s", "requests/s", "the paced requests' schedule's own rate", 1, func(r *Row) float64 { return r.RateScheduled }),
	numField("delivered_ramp_s", "s", "how long a closed loop took to fill its slots: first start to the concurrency-th", 1, func(r *Row) float64 { return r.RampSeconds }),
	numField("turnaround_p50_ms", "ms", "closed loop: median of each slot's time from one request's body end to its next start", 1000, func(r *Row) float64 { return r.Turnaround.P50 }),
	numField("turnaround_p99_ms", "ms", "closed loop: p99 of each slot's time from one request's body end to its next start", 1000, func(r *Row) float64 { return r.Turnaround.P99 }),
	numField("turnaround_max_ms", "ms", "closed loop: the longest any slot stood between one request's body end and its next start", 1000, func(r *Row) float64 { return r.Turnaround.Max }),
	numField("rate_delivered_per_s", "requests/s", "the rate the paced requests were sent at (their start stamps)", 1, func(r *Row) float64 { return r.RateDelivered }),
	intField("agents", "how many load agents sent the level (0: planrun alone)", func(r *Row) int { return r.Agents }),
	numField("clock_bound_ms", "ms", "the error bar of the figures that compare load agents' clocks (send lag, arrival order, delivered rate, the window): the largest clock bound, drift included", 1, func(r *Row) float64 { return r.ClockBoundMs }),
}

// ReferenceMetric is a figure a reference block may give a [low, high] range for, and
// how the row's figure is read (NaN when it was not measured, which gets no verdict).
type ReferenceMetric struct {
	Name   string
	Unit   string
	Figure func(*Row) float64
}

// ReferenceMetrics are the metrics of a reference block, in the order they are documented.
var ReferenceMetrics = []ReferenceMetric{
	{"ttft_s", "s", func(r *Row) float64 { return r.TTFT.P50 }},
	{"tpot_ms", "ms", func(r *Row) float64 { return r.TPOT.P50 * 1000 }},
	{"output_tok_s", "tokens/s", func(r *Row) float64 { return r.OutputTokS }},
	{"vram_gb", "GB", func(r *Row) float64 {
		// The server's own processes when NVML could attribute them, else the GPU's peak.
		if !math.IsNaN(r.VRAMProcessGB) {
			return r.VRAMProcessGB
		}
		return r.VRAMPeakGB
	}},
}

// ResultValues is result.* for one row, keyed by ResultField.Name.
func ResultValues(r *Row) map[string]cty.Value {
	vals := make(map[string]cty.Value, len(ResultFields))
	for _, f := range ResultFields {
		vals[f.Name] = f.Value(r)
	}
	return vals
}

// ReferenceFigure is the row's figure for a reference metric; NaN for an unknown name.
func ReferenceFigure(r *Row, metric string) float64 {
	for _, m := range ReferenceMetrics {
		if m.Name == metric {
			return m.Figure(r)
		}
	}
	return math.NaN()
}

func errorRate(r *Row) float64 {
	if r.Requests == 0 {
		return math.NaN()
	}
	return float64(r.Failed) / float64(r.Requests)
}

func strField(name, doc string, get func(*Row) string) ResultField {
	return ResultField{Name: name, Type: cty.String, Doc: doc,
		Value: func(r *Row) cty.Value { return cty.StringVal(get(r)) }}
}

func intField(name, doc string, get func(*Row) int) ResultField {
	return ResultField{Name: name, Type: cty.Number, Doc: doc,
		Value: func(r *Row) cty.Value { return cty.NumberIntVal(int64(get(r))) }}
}

// numField reads a float figure times scale (seconds → ms with 1000); NaN or ±Inf is null.
func numField(name, unit, doc string, scale float64, get func(*Row) float64) ResultField {
	return ResultField{Name: name, Type: cty.Number, Unit: unit, Doc: doc,
		Value: func(r *Row) cty.Value {
			f := get(r) * scale
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return cty.NullVal(cty.Number)
			}
			return cty.NumberFloatVal(f)
		}}
}

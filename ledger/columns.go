package ledger

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/stats"
)

// column is one CSV column: its header (with the unit) and how a Row's field is written
// and read back. The one table below defines the ledger format both ways.
type column struct {
	name string
	get  func(*Row) string
	set  func(*Row, string) error
	kind columnKind // how summary.json types the value
}

// columnKind is the JSON type of a column's value in summary.json.
type columnKind string

const (
	kindText    columnKind = "string"
	kindInteger columnKind = "integer"
	kindNumber  columnKind = "number"
	kindTime    columnKind = "time"
)

func strCol(name string, f func(*Row) *string) column {
	return column{name,
		func(r *Row) string { return mdtable.OneLine(*f(r)) }, // a torn final line stays detectable
		func(r *Row, s string) error { *f(r) = s; return nil }, kindText}
}

func intCol(name string, f func(*Row) *int) column {
	return column{name,
		func(r *Row) string { return strconv.Itoa(*f(r)) },
		func(r *Row, s string) error {
			if s == "" {
				*f(r) = 0
				return nil
			}
			v, err := strconv.Atoi(s)
			*f(r) = v
			return err
		}, kindInteger}
}

// floatCol writes *f(r)·scale (e.g. seconds → ms with scale 1000).
func floatCol(name string, scale float64, f func(*Row) *float64) column {
	return column{name,
		func(r *Row) string { return FormatFloat(*f(r) * scale) },
		func(r *Row, s string) error {
			if s == "" {
				*f(r) = math.NaN()
				return nil
			}
			v, err := strconv.ParseFloat(s, 64)
			*f(r) = v / scale
			return err
		}, kindNumber}
}

func timeCol(name string, f func(*Row) *time.Time) column {
	return column{name,
		func(r *Row) string {
			if f(r).IsZero() {
				return ""
			}
			return f(r).Format(time.RFC3339)
		},
		func(r *Row, s string) error {
			if s == "" {
				*f(r) = time.Time{}
				return nil
			}
			t, err := time.Parse(time.RFC3339, s)
			*f(r) = t
			return err
		}, kindTime}
}

// RowDist is one of a row's distributions as the ledger names it: the column prefix,
// the unit and the scale from the Row's seconds to it, and the decimals the report's
// tables show it with.
type RowDist struct {
	Prefix, Unit, Doc string
	Scale             float64
	Decimals          int
	Get               func(*Row) *stats.Dist
}

// LatencyDists are the latency distributions; rowDists adds the decode rate.
var (
	LatencyDists = []RowDist{
		{"ttft", "s", "time to first token", 1, 3, func(r *Row) *stats.Dist { return &r.TTFT }},
		{"tpot", "ms", "time per output token", 1000, 1, func(r *Row) *stats.Dist { return &r.TPOT }},
		{"itl", "ms", "gap between content chunks", 1000, 1, func(r *Row) *stats.Dist { return &r.ITL }},
		{"e2e", "s", "request latency", 1, 2, func(r *Row) *stats.Dist { return &r.E2E }},
	}
	rowDists = append(slices.Clip(LatencyDists),
		RowDist{"decode", "tok_s", "per-request decode rate", 1, 1, func(r *Row) *stats.Dist { return &r.DecodeRate }})
)

// distCols are the columns of one distribution: prefix_p50_unit ... prefix_max_unit.
func distCols(prefix, unit string, scale float64, f func(*Row) *stats.Dist) []column {
	return []column{
		floatCol(prefix+"_p50_"+unit, scale, func(r *Row) *float64 { return &f(r).P50 }),
		floatCol(prefix+"_p90_"+unit, scale, func(r *Row) *float64 { return &f(r).P90 }),
		floatCol(prefix+"_p99_"+unit, scale, func(r *Row) *float64 { return &f(r).P99 }),
		floatCol(prefix+"_mean_"+unit, scale, func(r *Row) *float64 { return &f(r).Mean }),
		floatCol(prefix+"_min_"+unit, scale, func(r *Row) *float64 { return &f(r).Min }),
		floatCol(prefix+"_max_"+unit, scale, func(r *Row) *float64 { return &f(r).Max }),
	}
}

// spreadCols are a distribution's p95 and standard deviation columns.
func spreadCols(prefix, unit string, scale float64, f func(*Row) *stats.Dist) []column {
	return []column{
		floatCol(prefix+"_p95_"+unit, scale, func(r *Row) *float64 { return &f(r).P95 }),
		floatCol(prefix+"_std_"+unit, scale, func(r *Row) *float64 { return &f(r).Std }),
	}
}

// FormatFloat writes up to 6 decimals without trailing zeros or exponent, so the
// ledger diffs well in git; NaN and infinities are written as an empty cell.
func FormatFloat(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	s := strconv.FormatFloat(v, 'f', 6, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// FormatFailures writes failures as "class=n;class=n", sorted by class.
func FormatFailures(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ";")
}

func parseFailures(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	m := map[string]int{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return nil, fmt.Errorf("failures %q: want class=count;...", s)
		}
		m[k] = n
	}
	return m, nil
}

var columns = func() []column {
	c := []column{
		strCol("plan", func(r *Row) *string { return &r.Plan }),
		strCol("plan_path", func(r *Row) *string { return &r.PlanPath }),
		strCol("plan_hash", func(r *Row) *string { return &r.PlanHash }),
		strCol("cell_id", func(r *Row) *string { return &r.CellID }),
		strCol("matrix", func(r *Row) *string { return &r.Matrix }),
		strCol("model", func(r *Row) *string { return &r.Model }),
		strCol("model_id", func(r *Row) *string { return &r.ModelID }),
		strCol("quantization", func(r *Row) *string { return &r.Quantization }),
		strCol("tool", func(r *Row) *string { return &r.Tool }),
		strCol("backend_url", func(r *Row) *string { return &r.BackendURL }),
		strCol("hardware", func(r *Row) *string { return &r.Hardware }),
		strCol("gpu", func(r *Row) *string { return &r.GPU }),
		strCol("workload", func(r *Row) *string { return &r.Workload }),
		intCol("concurrency", func(r *Row) *int { return &r.Concurrency }),
		floatCol("request_rate_per_s", 1, func(r *Row) *float64 { return &r.RequestRate }),
		intCol("runs", func(r *Row) *int { return &r.Runs }),
		intCol("max_tokens", func(r *Row) *int { return &r.MaxTokens }),
		strCol("status", func(r *Row) *string { return &r.Status }),
		intCol("requests", func(r *Row) *int { return &r.Requests }),
		intCol("succeeded", func(r *Row) *int { return &r.Succeeded }),
		intCol("failed", func(r *Row) *int { return &r.Failed }),
		{"failures_by_class",
			func(r *Row) string { return FormatFailures(r.Failures) },
			func(r *Row, s string) (err error) { r.Failures, err = parseFailures(s); return err }, kindText},
	}
	for _, d := range rowDists {
		c = append(c, distCols(d.Prefix, d.Unit, d.Scale, d.Get)...)
	}
	c = append(c,
		floatCol("output_tok_s", 1, func(r *Row) *float64 { return &r.OutputTokS }),
		floatCol("requests_s", 1, func(r *Row) *float64 { return &r.RequestsPerSec }),
		floatCol("window_s", 1, func(r *Row) *float64 { return &r.WindowSeconds }),
		intCol("output_tokens", func(r *Row) *int { return &r.OutputTokens }),
		strCol("token_source", func(r *Row) *string { return &r.TokenSource }),
		floatCol("tokens_per_chunk", 1, func(r *Row) *float64 { return &r.TokensPerChunk }),
		intCol("prompt_tokens_requested", func(r *Row) *int { return &r.PromptTokensRequested }),
		floatCol("prompt_tokens_actual", 1, func(r *Row) *float64 { return &r.PromptTokensActual }),
		intCol("early_stops", func(r *Row) *int { return &r.EarlyStops }),
		floatCol("vram_baseline_gb", 1, func(r *Row) *float64 { return &r.VRAMBaselineGB }),
		floatCol("vram_peak_gb", 1, func(r *Row) *float64 { return &r.VRAMPeakGB }),
		floatCol("vram_process_gb", 1, func(r *Row) *float64 { return &r.VRAMProcessGB }),
		strCol("vram_source", func(r *Row) *string { return &r.VRAMSource }),
		floatCol("vram_estimate_gb", 1, func(r *Row) *float64 { return &r.VRAMEstimateGB }),
		floatCol("server_vram_gb", 1, func(r *Row) *float64 { return &r.ServerVRAMGB }),
		floatCol("kv_cache_peak_pct", 1, func(r *Row) *float64 { return &r.KVCachePeakPct }),
		floatCol("prefix_cache_hit_pct", 1, func(r *Row) *float64 { return &r.PrefixCacheHitPct }),
		floatCol("server_ttft_mean_s", 1, func(r *Row) *float64 { return &r.ServerTTFTMeanS }),
		floatCol("server_tpot_mean_ms", 1, func(r *Row) *float64 { return &r.ServerTPOTMeanMs }),
		floatCol("server_e2e_mean_s", 1, func(r *Row) *float64 { return &r.ServerE2EMeanS }),
		floatCol("server_http_mean_s", 1, func(r *Row) *float64 { return &r.ServerHTTPMeanS }),
		floatCol("gpu_energy_j", 1, func(r *Row) *float64 { return &r.EnergyJ }),
		floatCol("tokens_per_joule", 1, func(r *Row) *float64 { return &r.TokensPerJoule }),
		floatCol("client_cpu_pct", 1, func(r *Row) *float64 { return &r.ClientCPUPct }),
		floatCol("client_lag_p99_ms", 1, func(r *Row) *float64 { return &r.ClientLagP99Ms }),
		strCol("stability", func(r *Row) *string { return &r.Stability }),
		floatCol("stability_spread_pct", 100, func(r *Row) *float64 { return &r.StabilitySpread }),
		strCol("goal", func(r *Row) *string { return &r.Goal }),
		strCol("reference", func(r *Row) *string { return &r.Reference }),
		strCol("reference_verdict", func(r *Row) *string { return &r.Verdict }),
		strCol("notes", func(r *Row) *string { return &r.Notes }),
		strCol("planrun_version", func(r *Row) *string { return &r.Version }),
		timeCol("started", func(r *Row) *time.Time { return &r.Started }),
		timeCol("ended", func(r *Row) *time.Time { return &r.Ended }),
		strCol("run_id", func(r *Row) *string { return &r.RunID }),
		strCol("host", func(r *Row) *string { return &r.Host }),
	)
	// Appended after the first ledger format, so older ledgers upgrade in place.
	for _, d := range rowDists {
		c = append(c, spreadCols(d.Prefix, d.Unit, d.Scale, d.Get)...)
	}
	c = append(c,
		floatCol("slo_attainment_pct", 1, func(r *Row) *float64 { return &r.SLOAttainmentPct }),
		floatCol("goodput_requests_s", 1, func(r *Row) *float64 { return &r.GoodputReqS }),
		floatCol("goodput_tok_s", 1, func(r *Row) *float64 { return &r.GoodputTokS }),
		// Where a batch scheduler ran the row (BatchPlace); earlier ledgers had a set of
		// columns per scheduler, which renamedColumns reads into these.
		strCol("batch_scheduler", func(r *Row) *string { return &r.Batch.Scheduler }),
		strCol("batch_job", func(r *Row) *string { return &r.Batch.Job }),
		strCol("batch_node", func(r *Row) *string { return &r.Batch.Node }),
		strCol("batch_pod", func(r *Row) *string { return &r.Batch.Pod }),
		strCol("batch_state", func(r *Row) *string { return &r.Batch.State }),
	)
	// The client's side of TTFT: connection set-up and send delay.
	c = append(c,
		intCol("new_connections", func(r *Row) *int { return &r.NewConnections }),
		floatCol("conn_setup_p50_ms", 1000, func(r *Row) *float64 { return &r.ConnectSetup.P50 }),
		floatCol("conn_setup_max_ms", 1000, func(r *Row) *float64 { return &r.ConnectSetup.Max }),
		floatCol("send_delay_p50_ms", 1000, func(r *Row) *float64 { return &r.SendDelay.P50 }),
		floatCol("send_delay_p99_ms", 1000, func(r *Row) *float64 { return &r.SendDelay.P99 }),
		floatCol("send_delay_max_ms", 1000, func(r *Row) *float64 { return &r.SendDelay.Max }),
	)
	c = append(c, floatCol("shared_prefix_pct", 1, func(r *Row) *float64 { return &r.SharedPrefixPct }))
	// How late open-loop and replayed requests were sent against their schedule (empty
	// in closed loop).
	c = append(c,
		floatCol("send_lag_p50_ms", 1000, func(r *Row) *float64 { return &r.SendLag.P50 }),
		floatCol("send_lag_p99_ms", 1000, func(r *Row) *float64 { return &r.SendLag.P99 }),
		floatCol("send_lag_max_ms", 1000, func(r *Row) *float64 { return &r.SendLag.Max }),
	)
	// The load delivered against the load asked, and the verdict on it.
	c = append(c,
		floatCol("delivered_mean_in_flight", 1, func(r *Row) *float64 { return &r.InFlightMean }),
		floatCol("delivered_p99_in_flight", 1, func(r *Row) *float64 { return &r.InFlightP99 }),
		floatCol("delivered_max_in_flight", 1, func(r *Row) *float64 { return &r.InFlightMax }),
		floatCol("delivered_held_in_flight", 1, func(r *Row) *float64 { return &r.InFlightHeld }),
		floatCol("rate_scheduled_per_s", 1, func(r *Row) *float64 { return &r.RateScheduled }),
		floatCol("rate_delivered_per_s", 1, func(r *Row) *float64 { return &r.RateDelivered }),
		strCol("fidelity", func(r *Row) *string { return &r.Fidelity }),
		floatCol("fidelity_shortfall_pct", 1, func(r *Row) *float64 { return &r.FidelityShortfallPct }),
		floatCol("delivered_ramp_s", 1, func(r *Row) *float64 { return &r.RampSeconds }),
		floatCol("delivered_idle_in_flight", 1, func(r *Row) *float64 { return &r.InFlightIdle }),
		floatCol("turnaround_p50_ms", 1000, func(r *Row) *float64 { return &r.Turnaround.P50 }),
		floatCol("turnaround_p99_ms", 1000, func(r *Row) *float64 { return &r.Turnaround.P99 }),
		floatCol("turnaround_max_ms", 1000, func(r *Row) *float64 { return &r.Turnaround.Max }),
	)
	c = append(c, reasoningColumns()...)
	c = append(c, embeddingsColumns()...)
	c = append(c, memoryColumns()...)
	c = append(c, intervalColumns()...)
	c = append(c, strCol("quantization_served", func(r *Row) *string { return &r.QuantizationServed }))
	c = append(c, jobMemoryColumns()...)
	c = append(c,
		intCol("agents", func(r *Row) *int { return &r.Agents }),
		floatCol("clock_bound_ms", 1, func(r *Row) *float64 { return &r.ClockBoundMs }),
		floatCol("sketch_error_pct", 1, func(r *Row) *float64 { return &r.SketchErrorPct }),
	)
	c = append(c, qualityColumns()...)
	c = append(c, costColumns()...)
	c = append(c, strCol("engine_build", func(r *Row) *string { return &r.EngineBuild }))
	c = append(c, agenticColumns()...)
	c = append(c, spreadColumns()...)
	c = append(c, insideColumns()...)
	c = append(c, energyColumns()...)
	c = append(c, agentLoopColumns()...)
	c = append(c, listColumns()...)
	return c
}()

// Header is the ledger's CSV header, in column order.
func Header() []string {
	h := make([]string, len(columns))
	for i, c := range columns {
		h[i] = c.name
	}
	return h
}

// Record is the row as CSV fields, in Header order, with the backend URL made safe.
func (r Row) Record() []string {
	r.BackendURL = SafeURL(r.BackendURL)
	rec := make([]string, len(columns))
	for i, c := range columns {
		rec[i] = c.get(&r)
	}
	return rec
}

// ParseRecord reads a row back from CSV fields in Header order.
func ParseRecord(rec []string) (Row, error) {
	if len(rec) != len(columns) {
		return Row{}, fmt.Errorf("%d fields, want %d", len(rec), len(columns))
	}
	r := NewRow()
	for i, c := range columns {
		if err := c.set(&r, rec[i]); err != nil {
			return Row{}, fmt.Errorf("column %s: %w", c.name, err)
		}
	}
	return r, nil
}

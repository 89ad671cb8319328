package stats

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// close enough for sums of a few float64 seconds; the inputs are exact milliseconds.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestPercentileLinear(t *testing.T) {
	// Expected values are numpy.percentile(x, q) with the default linear method.
	tests := []struct {
		name string
		x    []float64
		p    float64
		want float64
	}{
		{"empty", nil, 0.5, math.NaN()},
		{"single", []float64{7}, 0.99, 7},
		{"even median", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"p90 of 4", []float64{1, 2, 3, 4}, 0.9, 3.7},
		{"p99 of 4", []float64{1, 2, 3, 4}, 0.99, 3.97},
		{"p90 of 5", []float64{15, 20, 35, 40, 50}, 0.9, 46},
		{"p0", []float64{15, 20, 35, 40, 50}, 0, 15},
		{"p100", []float64{15, 20, 35, 40, 50}, 1, 50},
		{"past p100", []float64{15, 20, 35, 40, 50}, 1.5, 50},
		// The least value, not an interpolation toward the next (0·∞ is NaN).
		{"p0 beside +Inf", []float64{1, math.Inf(1)}, 0, 1},
		{"odd median", []float64{1, 3, 10}, 0.5, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.x, tt.p); !near(got, tt.want) {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.x, tt.p, got, tt.want)
			}
		})
	}
}

func TestNewDist(t *testing.T) {
	d := NewDist([]float64{4, 1, 3, 2}) // unsorted on purpose
	want := Dist{N: 4, P50: 2.5, P90: 3.7, P99: 3.97, Mean: 2.5, Min: 1, Max: 4}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", d.P50, want.P50}, {"p90", d.P90, want.P90}, {"p99", d.P99, want.P99},
		{"mean", d.Mean, want.Mean}, {"min", d.Min, want.Min}, {"max", d.Max, want.Max}} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if d.N != 4 {
		t.Errorf("N = %d, want 4", d.N)
	}
	e := NewDist(nil)
	if e.N != 0 || !math.IsNaN(e.P50) || !math.IsNaN(e.Mean) || !math.IsNaN(e.Max) {
		t.Errorf("empty dist = %+v, want N=0 and NaN figures", e)
	}
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// ok builds a successful sample starting at offset `at` whose content chunks arrive at
// the given offsets (from the sample's start) and which reports `tokens` tokens.
func ok(at int, tokens int, src backends.TokenSource, arrivals ...int) backends.Sample {
	s := backends.Sample{Start: t0.Add(ms(at)), OutputTokens: tokens, TokenSource: src, Chunks: len(arrivals)}
	for _, a := range arrivals {
		s.ChunkArrivals = append(s.ChunkArrivals, ms(a))
	}
	s.FirstToken = ms(arrivals[0])
	s.End = ms(arrivals[len(arrivals)-1])
	return s
}

func failed(at, end int, class backends.ErrorClass) backends.Sample {
	return backends.Sample{Start: t0.Add(ms(at)), End: ms(end), Err: &backends.Error{Class: class, Message: "x"}}
}

func TestSummarizeExact(t *testing.T) {
	a := ok(0, 5, backends.TokensUsage, 100, 200, 300, 500) // TTFT .1, E2E .5, TPOT .1, ITL .1 .1 .2
	a.PromptTokens = 130
	b := ok(100, 3, backends.TokensUsage, 300, 400) // TTFT .3, E2E .4, TPOT .05, ITL .1
	b.PromptTokens = 126
	c := ok(200, 1, backends.TokensUsage, 250) // one token: no TPOT, no ITL
	samples := []backends.Sample{a, b, c,
		failed(300, 1800, backends.ErrTimeout), // ends last: window = 0 → 2.1 s
		failed(400, 0, backends.ErrRefused),
		failed(500, 10, backends.ErrTimeout),
	}
	l := Summarize(samples, Window{}, Target{PromptTokens: 128, MaxTokens: 5})

	ints := []struct {
		name      string
		got, want int
	}{
		{"requests", l.Requests, 6}, {"succeeded", l.Succeeded, 3}, {"failed", l.Failed, 3},
		{"output tokens", l.OutputTokens, 9}, {"early stops", l.EarlyStops, 2},
		{"ttft n", l.TTFT.N, 3}, {"tpot n", l.TPOT.N, 2}, {"itl n", l.ITL.N, 4}, {"e2e n", l.E2E.N, 3},
		{"decode n", l.DecodeRate.N, 2}, {"timeouts", l.Failures[backends.ErrTimeout], 2},
		{"refused", l.Failures[backends.ErrRefused], 1}, {"classes", len(l.Failures), 2},
		{"prompt requested", l.PromptTokensRequested, 128},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"window", l.WindowSeconds, 2.1},
		{"ttft p50", l.TTFT.P50, 0.25}, {"ttft min", l.TTFT.Min, 0.1}, {"ttft max", l.TTFT.Max, 0.3},
		{"ttft mean", l.TTFT.Mean, (0.1 + 0.3 + 0.25) / 3},
		{"tpot p50", l.TPOT.P50, 0.075}, {"tpot p90", l.TPOT.P90, 0.095},
		{"itl p50", l.ITL.P50, 0.1}, {"itl max", l.ITL.Max, 0.2},
		{"e2e p50", l.E2E.P50, 0.4}, {"e2e p99", l.E2E.P99, 0.4 + 0.98*0.1},
		{"decode p50", l.DecodeRate.P50, 15}, {"decode max", l.DecodeRate.Max, 20},
		{"output tok/s", l.OutputTokS, 9 / 2.1}, {"requests/s", l.RequestsPerSec, 3 / 2.1},
		{"tokens/chunk", l.TokensPerChunk, 9.0 / 7}, {"prompt actual", l.PromptTokensActual, 128},
	}
	for _, c := range floats {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if l.TokenSource != "usage" {
		t.Errorf("token source = %q, want usage", l.TokenSource)
	}
}

func TestSummarizeExplicitWindowAndSources(t *testing.T) {
	tests := []struct {
		name    string
		samples []backends.Sample
		want    string
	}{
		{"none succeeded", []backends.Sample{failed(0, 5, backends.ErrServer)}, ""},
		{"chunks", []backends.Sample{ok(0, 2, backends.TokensChunks, 1, 2)}, "chunks"},
		{"server", []backends.Sample{ok(0, 2, backends.TokensServer, 1, 2), ok(0, 2, backends.TokensServer, 1, 2)}, "server"},
		{"mixed", []backends.Sample{ok(0, 2, backends.TokensServer, 1, 2), ok(0, 2, backends.TokensChunks, 1, 2)}, "mixed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Window{Start: t0, End: t0.Add(4 * time.Second)}
			l := Summarize(tt.samples, w, Target{})
			if l.TokenSource != tt.want {
				t.Errorf("token source = %q, want %q", l.TokenSource, tt.want)
			}
			if l.WindowSeconds != 4 {
				t.Errorf("window = %v, want the explicit 4 s", l.WindowSeconds)
			}
			if l.EarlyStops != 0 {
				t.Errorf("early stops = %d without a max_tokens target", l.EarlyStops)
			}
		})
	}
	empty := Summarize(nil, Window{}, Target{})
	if !math.IsNaN(empty.OutputTokS) || !math.IsNaN(empty.TokensPerChunk) || !math.IsNaN(empty.PromptTokensActual) {
		t.Errorf("empty level should have NaN rates, got %+v", empty)
	}
}

func TestStabilityOf(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name       string
		medians    []float64
		want       Stability
		wantSpread float64
	}{
		{"none", nil, SingleRun, nan},
		{"one", []float64{0.5}, SingleRun, nan},
		{"one plus a run without ttft", []float64{0.5, nan}, SingleRun, nan},
		{"identical", []float64{0.5, 0.5, 0.5}, Stable, 0},
		{"exactly 10%", []float64{0.9, 1.0, 1.1}, Stable, 0.1},
		{"noisy", []float64{1.0, 1.0, 1.2}, Noisy, 0.2},
		{"exactly 30%", []float64{0.7, 1.0, 1.0}, Noisy, 0.3},
		{"unstable", []float64{1.0, 1.0, 1.5}, Unstable, 0.5},
		{"two runs: m is their mean", []float64{1.0, 1.5}, Noisy, 0.2},
		{"a median of 0: no spread relative to it", []float64{0, 0, 1}, SingleRun, nan},
		// Spreads of exactly a limit plus the rule's 1e-9 tolerance (found by search: the
		// float64 division lands on it) are still on the limit's side.
		{"at 10% and its tolerance", []float64{0.17, 0.17, 0.18700000017}, Stable, 0.100000001},
		{"at 30% and its tolerance", []float64{1.3, 1.3, 1.6900000013}, Noisy, 0.300000001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, spread := StabilityOf(tt.medians)
			if got != tt.want || !near(spread, tt.wantSpread) {
				t.Errorf("StabilityOf(%v) = %q, %v; want %q, %v", tt.medians, got, spread, tt.want, tt.wantSpread)
			}
		})
	}
}

func TestReference(t *testing.T) {
	tests := []struct {
		v    float64
		want Verdict
	}{{0.59, Below}, {0.6, Within}, {0.82, Within}, {1.0, Within}, {1.01, Above}, {math.NaN(), NoValue}}
	for _, tt := range tests {
		if got := Reference(tt.v, 0.6, 1.0); got != tt.want {
			t.Errorf("Reference(%v, 0.6, 1.0) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestSummarizeRuns(t *testing.T) {
	// Three runs with median TTFTs 0.1, 0.1 and 0.2 s: m = 0.1, spread 100% → unstable.
	run := func(ttft, tokens int, seconds int) MeasuredRun {
		s := ok(0, tokens, backends.TokensUsage, ttft, ttft+100)
		return MeasuredRun{Samples: []backends.Sample{s}, Window: Window{Start: t0, End: t0.Add(time.Duration(seconds) * time.Second)}}
	}
	runs := []MeasuredRun{run(100, 10, 1), run(100, 20, 2), run(200, 90, 3)}
	r := SummarizeRuns(runs, Target{MaxTokens: 20})
	if len(r.PerRun) != 3 {
		t.Fatalf("per run = %d levels, want 3", len(r.PerRun))
	}
	// TTFT's spread is 100%; throughput's (10, 10, 30 tok/s) 200%, the worst.
	if r.Stability != Unstable || !near(r.Spread, 2) || r.StabilityFigure != FigureThroughput || !near(r.Spreads[0].Spread, 1) {
		t.Errorf("stability = %q spread %v of %q (spreads %+v), want unstable 2 of throughput, TTFT's 1",
			r.Stability, r.Spread, r.StabilityFigure, r.Spreads)
	}
	// Run throughputs 10, 10, 30 tok/s → median 10; pooled 120 tokens / 6 s = 20.
	if !near(r.Median.OutputTokS, 10) {
		t.Errorf("median tok/s = %v, want 10", r.Median.OutputTokS)
	}
	if !near(r.Pooled.OutputTokS, 20) {
		t.Errorf("pooled tok/s = %v, want 20", r.Pooled.OutputTokS)
	}
	if r.Pooled.Requests != 3 || r.Pooled.TTFT.N != 3 || !near(r.Pooled.TTFT.P90, 0.18) {
		t.Errorf("pooled = %d requests, ttft %+v; want 3 requests, p90 0.18", r.Pooled.Requests, r.Pooled.TTFT)
	}
	if !near(r.Median.TTFT.P50, 0.1) || r.Pooled.EarlyStops != 1 || r.Median.TokenSource != "usage" {
		t.Errorf("median ttft p50 %v, pooled early stops %d, median source %q", r.Median.TTFT.P50, r.Pooled.EarlyStops, r.Median.TokenSource)
	}
}

// manySamples is a level of n requests with 8 chunks each, deterministic timings.
func manySamples(n int) []backends.Sample {
	out := make([]backends.Sample, n)
	for i := range out {
		base := 50 + i%97
		arr := make([]time.Duration, 8)
		for j := range arr {
			arr[j] = ms(base + 10*j)
		}
		out[i] = backends.Sample{Start: t0.Add(ms(i)), FirstToken: arr[0], End: arr[7], ChunkArrivals: arr,
			Chunks: 8, OutputTokens: 16, TokenSource: backends.TokensUsage}
		if i%1000 == 0 {
			out[i] = failed(i, 5, backends.ErrServer)
		}
	}
	return out
}

func TestSummarizeLarge(t *testing.T) {
	const n = 100_000
	l := Summarize(manySamples(n), Window{}, Target{})
	if l.Requests != n || l.Failed != n/1000 || l.Succeeded != n-n/1000 {
		t.Fatalf("counts = %d/%d/%d", l.Requests, l.Succeeded, l.Failed)
	}
	if l.ITL.N != 7*l.Succeeded || !near(l.ITL.P50, 0.01) || !near(l.TokensPerChunk, 2) {
		t.Errorf("itl n %d p50 %v tokens/chunk %v", l.ITL.N, l.ITL.P50, l.TokensPerChunk)
	}
	if l.TTFT.Min < 0.05 || l.TTFT.Max > 0.146+1e-9 || l.TTFT.P50 < l.TTFT.Min || l.TTFT.P99 > l.TTFT.Max {
		t.Errorf("ttft out of the scripted range: %+v", l.TTFT)
	}
}

func BenchmarkSummarize100k(b *testing.B) {
	samples := manySamples(100_000)
	b.ReportAllocs()
	for b.Loop() {
		Summarize(samples, Window{}, Target{MaxTokens: 16})
	}
}

// TestConnectionAndSendDelay: connection set-up counts only requests that opened one,
// send delay every request written (failures too), less the set-up.
func TestConnectionAndSendDelay(t *testing.T) {
	ms := time.Millisecond
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	samples := []backends.Sample{
		{Start: start, Connect: 3 * ms, Wrote: 4 * ms, FirstToken: 20 * ms, End: 30 * ms, OutputTokens: 2, Chunks: 2},
		{Start: start, Wrote: 2 * ms, FirstToken: 20 * ms, End: 30 * ms, OutputTokens: 2, Chunks: 2},
		{Start: start, Wrote: 5 * ms, End: 6 * ms, Err: &backends.Error{Class: backends.ErrServer}},
		{Start: start, End: 6 * ms, Err: &backends.Error{Class: backends.ErrRefused}}, // never written
	}
	l := Summarize(samples, Window{}, Target{})
	if l.NewConnections != 1 || l.ConnectSetup.N != 1 || l.ConnectSetup.Max != 0.003 {
		t.Errorf("connections %d, set-up %+v", l.NewConnections, l.ConnectSetup)
	}
	if l.SendDelay.N != 3 || l.SendDelay.Min != 0.001 || l.SendDelay.Max != 0.005 || l.SendDelay.P50 != 0.002 {
		t.Errorf("send delay %+v, want 1, 2 and 5 ms", l.SendDelay)
	}
}

// A run of more requests than ITLExactGaps keeps its per-request figures in the sketch
// past that: the percentiles stay within ITLRelativeError of the exact ones and the
// summary says they are sketched.
func TestAccumulatorSketchesPastTheExactLimit(t *testing.T) {
	samples := manySamples(100_000)
	exact := Summarize(samples, Window{}, Target{})
	a := NewAccumulator(Target{})
	for _, st := range a.perRequest() {
		st.limit = 1000
	}
	for i := range samples {
		a.addSample(&samples[i])
	}
	got := a.Summary(Window{})
	if exact.RelativeError != 0 || got.RelativeError != ITLRelativeError {
		t.Fatalf("relative error %v exact, %v sketched", exact.RelativeError, got.RelativeError)
	}
	for _, d := range []struct {
		name      string
		want, got Dist
	}{{"ttft", exact.TTFT, got.TTFT}, {"tpot", exact.TPOT, got.TPOT}, {"e2e", exact.E2E, got.E2E}, {"decode", exact.DecodeRate, got.DecodeRate}} {
		if d.got.N != d.want.N || d.got.Min != d.want.Min || d.got.Max != d.want.Max || math.Abs(d.got.Mean-d.want.Mean) > 1e-9*d.want.Mean {
			t.Errorf("%s: count, min, max or mean not exact: %+v, want %+v", d.name, d.got, d.want)
		}
		for _, q := range [][2]float64{{d.got.P50, d.want.P50}, {d.got.P90, d.want.P90}, {d.got.P95, d.want.P95}, {d.got.P99, d.want.P99}} {
			if math.Abs(q[0]-q[1]) > 1.01*ITLRelativeError*q[1] {
				t.Errorf("%s: percentile %v, exact %v", d.name, q[0], q[1])
			}
		}
	}
}

// BenchmarkAccumulatorMemory adds 4M requests to one run's accumulator and reports the
// live heap after 1M and after 4M: past ITLExactGaps requests every per-request figure
// goes into a bounded sketch, so a long trace replay's statistics stay flat.
func BenchmarkAccumulatorMemory(b *testing.B) {
	samples := manySamples(10_000)
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	for range b.N {
		a := NewAccumulator(Target{})
		for i := range 4_000_000 {
			if i == 1_000_000 {
				b.ReportMetric(heap(), "heap-MiB-at-1M")
			}
			a.addSample(&samples[i%len(samples)])
		}
		b.ReportMetric(heap(), "heap-MiB-at-4M")
		runtime.KeepAlive(a)
	}
}

// The summary says its per-request figures are sketched whichever of them spilled, not
// only E2E or send delay: here only connection set-up does.
func TestRelativeErrorForAnySketchedFigure(t *testing.T) {
	a := NewAccumulator(Target{})
	a.connect.limit = 2
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3 {
		a.addSample(&backends.Sample{Start: start, Connect: time.Duration(i+1) * time.Millisecond, End: 5 * time.Millisecond,
			Err: &backends.Error{Class: backends.ErrRefused}})
	}
	if got := a.Summary(Window{}); got.RelativeError != ITLRelativeError || got.NewConnections != 3 {
		t.Fatalf("relative error %v, %d connections; want %v and 3", got.RelativeError, got.NewConnections, ITLRelativeError)
	}
}

// Summarize computes a Summary from the samples of one run, through the Accumulator
// apply uses; only tests need all of a run's samples at once. A zero window is derived
// from the samples (Accumulator.Window).
func Summarize(samples []backends.Sample, w Window, t Target) Summary {
	return accumulate(samples, t).Summary(w)
}

// A level names where its reasoning counts came from (beside the answer's TokenSource),
// and shows the embeddings figures only when its requests embedded something.
func TestReasoningSourceAndInputs(t *testing.T) {
	chat := ok(0, 4, backends.TokensUsage, 100, 200)
	chat.ReasoningTokens, chat.ReasoningTokenSource, chat.PromptTokens = 2, backends.TokensServer, 50
	l := Summarize([]backends.Sample{chat}, Window{}, Target{})
	if l.ReasoningTokenSource != "server" || l.TokenSource != "usage" {
		t.Errorf("sources: reasoning %q, answer %q; want server, usage", l.ReasoningTokenSource, l.TokenSource)
	}
	if l.Inputs != 0 || l.InputTokens != 0 || l.InputsPerSec != 0 || l.InputTokS != 0 {
		t.Errorf("a chat level's embeddings figures: %d inputs, %d tokens, %v/s, %v tok/s; want none",
			l.Inputs, l.InputTokens, l.InputsPerSec, l.InputTokS)
	}
	other := ok(1000, 4, backends.TokensUsage, 100, 200)
	other.ReasoningTokens, other.ReasoningTokenSource = 1, backends.TokensChunks
	r := SummarizeRuns([]MeasuredRun{{Samples: []backends.Sample{chat}}, {Samples: []backends.Sample{chat}}}, Target{})
	mixed := SummarizeRuns([]MeasuredRun{{Samples: []backends.Sample{chat}}, {Samples: []backends.Sample{other}}}, Target{})
	if r.Pooled.ReasoningTokenSource != "server" || mixed.Pooled.ReasoningTokenSource != "mixed" {
		t.Errorf("pooled reasoning sources %q and %q, want server and mixed", r.Pooled.ReasoningTokenSource, mixed.Pooled.ReasoningTokenSource)
	}
	embed := backends.Sample{Start: t0, End: ms(500), Inputs: 4, PromptTokens: 40}
	l = Summarize([]backends.Sample{embed}, Window{Start: t0, End: t0.Add(2 * time.Second)}, Target{})
	if l.ReasoningTokenSource != "" || l.Inputs != 4 || l.InputTokens != 40 || !near(l.InputsPerSec, 2) || !near(l.InputTokS, 20) {
		t.Errorf("embeddings over 2 s: reasoning source %q, %d inputs, %d tokens, %v/s, %v tok/s; want none, 4, 40, 2, 20",
			l.ReasoningTokenSource, l.Inputs, l.InputTokens, l.InputsPerSec, l.InputTokS)
	}
}

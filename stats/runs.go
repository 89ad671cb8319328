package stats

import (
	"math"
	"reflect"

	"github.com/planrun/planrun/backends"
)

// MeasuredRun is one measured run of a concurrency level, as the statistics take it
// (warm-up runs are never passed here): either its Samples, or an Accumulator that was
// fed them as they finished.
type MeasuredRun struct {
	Samples []backends.Sample
	// Acc, when set, stands for Samples: the run's requests, already accumulated.
	Acc *Accumulator
	// Window is the run's measured window; zero derives it from the requests.
	Window Window
}

// Runs aggregates the repeat runs of one concurrency level.
type Runs struct {
	// PerRun is each run's own summary, in order.
	PerRun []Summary `json:"per_run"`
	// Pooled summarises every request of every run together: its percentiles are over
	// all requests, its counts and failures are totals, and its rates divide by the sum
	// of the run windows.
	Pooled Summary `json:"pooled"`
	// Median holds, for every figure, the median across runs of each run's figure (the
	// run-to-run typical value; e.g. Median.OutputTokS is the median run throughput).
	// Its Failures map is nil and its TokenSource, ITLRelativeError and RelativeError are
	// Pooled's: they do not have medians.
	Median Summary `json:"median"`
	// Spreads are the headline figures' spreads across runs, each judged by the seed's
	// rule: the runs' median TTFT (an embeddings level's median E2E: it has no TTFT),
	// median TPOT and output throughput, in that order.
	Spreads []FigureSpread `json:"spreads"`
	// Spread and Stability are the worst of Spreads (the largest spread, which has the
	// worst verdict), and StabilityFigure names its figure; Spread is NaN and Stability
	// SingleRun when no figure has two runs to judge.
	Spread          float64   `json:"spread"`
	Stability       Stability `json:"stability"`
	StabilityFigure string    `json:"stability_figure"`
	// Across are the intervals of the figures across runs (the median run's).
	Across AcrossRuns `json:"across_runs"`
}

// AcrossRuns are intervals across repeat runs: of the median run's figure (the one a
// row shows for a rate), distribution-free from the runs' own figures, at Confidence.
// With fewer runs than that needs (6 at 95%), each is unbounded and says how many runs
// would bound it.
type AcrossRuns struct {
	Confidence  float64  `json:"confidence"`
	Runs        int      `json:"runs"`
	OutputTokS  Interval `json:"output_tok_s"`
	RequestsS   Interval `json:"requests_s"`
	GoodputTokS Interval `json:"goodput_tok_s"`
	GoodputReqS Interval `json:"goodput_requests_s"`
	// TTFTP50 is the interval of the median run's median TTFT (the stability figure:
	// the median E2E for embeddings), and MinMax the confidence with which the smallest
	// and largest run figures bound it (MinMaxConfidence: 75% for 3 runs).
	TTFTP50 Interval `json:"ttft_p50_s"`
	MinMax  float64  `json:"min_max_confidence"`
}

// SummarizeRuns summarises each run, pools all requests, takes medians across runs and
// judges stability from the spread of per-run median TTFT.
func SummarizeRuns(runs []MeasuredRun, t Target) Runs {
	var r Runs
	pool := NewAccumulator(t)
	var windowSum float64
	medians := make([]float64, 0, len(runs))
	for _, run := range runs {
		acc := run.Acc
		if acc == nil {
			acc = accumulate(run.Samples, t)
		}
		w := run.Window
		if w.IsZero() {
			w = acc.Window()
		}
		l := acc.Summary(w)
		r.PerRun = append(r.PerRun, l)
		medians = append(medians, stabilityFigure(l))
		windowSum += w.Seconds()
		pool.merge(acc)
	}
	r.Pooled = pool.level(windowSum)
	r.Median = medianLevel(r.PerRun)
	r.Median.TokenSource, r.Median.ReasoningTokenSource = r.Pooled.TokenSource, r.Pooled.ReasoningTokenSource
	r.Median.ITLRelativeError, r.Median.RelativeError = r.Pooled.ITLRelativeError, r.Pooled.RelativeError
	r.Spreads = figureSpreads(r.PerRun, medians)
	r.Stability, r.Spread, r.StabilityFigure = Worst(r.Spreads)
	r.Across = acrossRuns(r.PerRun, medians, t.confidence())
	// A median of the runs' own intervals means nothing: the pooled ones stand.
	r.Median.SLOAttainmentCI, r.Median.Confidence = r.Pooled.SLOAttainmentCI, r.Pooled.Confidence
	return r
}

// acrossRuns is the intervals of the median run's figures from each run's.
func acrossRuns(per []Summary, stability []float64, conf float64) AcrossRuns {
	of := func(f func(Summary) float64) Interval {
		vs := make([]float64, len(per))
		for i, l := range per {
			vs[i] = f(l)
		}
		return MedianOfRuns(vs, conf)
	}
	n := 0
	for _, v := range stability {
		if !math.IsNaN(v) {
			n++
		}
	}
	return AcrossRuns{Confidence: conf, Runs: len(per),
		OutputTokS:  of(func(l Summary) float64 { return l.OutputTokS }),
		RequestsS:   of(func(l Summary) float64 { return l.RequestsPerSec }),
		GoodputTokS: of(func(l Summary) float64 { return l.GoodputTokS }),
		GoodputReqS: of(func(l Summary) float64 { return l.GoodputReqS }),
		TTFTP50:     MedianOfRuns(stability, conf),
		MinMax:      MinMaxConfidence(n)}
}

// stabilityFigure is the run's figure whose spread across runs stability judges: its
// median TTFT, or for an embeddings run (no tokens generated, so no TTFT) its median E2E.
func stabilityFigure(l Summary) float64 {
	if math.IsNaN(l.TTFT.P50) && l.Inputs > 0 {
		return l.E2E.P50
	}
	return l.TTFT.P50
}

// The headline figures stability judges, as FigureSpread names them.
const (
	FigureTTFT       = "ttft"
	FigureE2E        = "e2e" // an embeddings level's, in TTFT's place
	FigureTPOT       = "tpot"
	FigureThroughput = "throughput"
)

// FigureSpread is one headline figure's spread across runs and its verdict
// (StabilityOf's).
type FigureSpread struct {
	Figure    string    `json:"figure"`
	Spread    float64   `json:"spread"`
	Stability Stability `json:"stability"`
}

// figureSpreads judges each headline figure across the runs; first are the runs'
// stability figures (median TTFT or E2E, stabilityFigure's).
func figureSpreads(per []Summary, first []float64) []FigureSpread {
	name := FigureTTFT
	if len(per) > 0 && math.IsNaN(per[0].TTFT.P50) && per[0].Inputs > 0 {
		name = FigureE2E
	}
	of := func(figure string, vs []float64) FigureSpread {
		st, sp := StabilityOf(vs)
		return FigureSpread{Figure: figure, Spread: sp, Stability: st}
	}
	tpot := make([]float64, len(per))
	tput := make([]float64, len(per))
	for i, l := range per {
		tpot[i], tput[i] = l.TPOT.P50, l.OutputTokS
	}
	return []FigureSpread{of(name, first), of(FigureTPOT, tpot), of(FigureThroughput, tput)}
}

// Worst is the worst verdict of the figures' (unstable, then noisy, then stable; a
// figure without two runs to judge counts for nothing), its spread and its figure's
// name: of two figures with the same verdict, the larger spread. SingleRun, NaN and ""
// when no figure was judged.
func Worst(figs []FigureSpread) (Stability, float64, string) {
	rank := map[Stability]int{Stable: 1, Noisy: 2, Unstable: 3}
	st, spread, name := SingleRun, math.NaN(), ""
	for _, f := range figs {
		r := rank[f.Stability]
		if r == 0 {
			continue
		}
		if r > rank[st] || (r == rank[st] && f.Spread > spread) {
			st, spread, name = f.Stability, f.Spread, f.Figure
		}
	}
	return st, spread, name
}

// medianLevel takes the median across levels of every number in a Summary: each
// float64 and int field, and those of its struct fields (the Dists, Delivered), so a
// figure added to Summary has its median without a line here. Maps, slices, pointers
// and strings stay zero (SummarizeRuns fills the ones that have a meaning). An int's
// median is rounded, and 0 where no level has it (NaN).
func medianLevel(levels []Summary) Summary {
	var out Summary
	src := make([]reflect.Value, len(levels))
	for i := range levels {
		src[i] = reflect.ValueOf(&levels[i]).Elem()
	}
	medianFields(reflect.ValueOf(&out).Elem(), src)
	return out
}

// medianFields sets each numeric field of dst, a struct, to the median of that field
// across src, structs of the same type, recursing into struct fields.
func medianFields(dst reflect.Value, src []reflect.Value) {
	vs := make([]float64, len(src))
	sub := make([]reflect.Value, len(src))
	for f := range dst.NumField() {
		switch field := dst.Field(f); field.Kind() {
		case reflect.Struct:
			for i, s := range src {
				sub[i] = s.Field(f)
			}
			medianFields(field, sub)
		case reflect.Float64:
			for i, s := range src {
				vs[i] = s.Field(f).Float()
			}
			field.SetFloat(median(vs))
		case reflect.Int:
			for i, s := range src {
				vs[i] = float64(s.Field(f).Int())
			}
			if m := median(vs); !math.IsNaN(m) {
				field.SetInt(int64(math.Round(m)))
			}
		}
	}
}

// Stability is the verdict on a figure's run-to-run spread (the seed's rule, which it
// states for median TTFT and planrun holds every headline figure to).
type Stability string

const (
	// Stable: every run's median TTFT within ±10% of the median of run medians.
	Stable Stability = "stable"
	// Noisy: the largest deviation is above 10% but at most 30%.
	Noisy Stability = "noisy"
	// Unstable: some run deviates by more than 30%; check background load and the driver.
	Unstable Stability = "unstable"
	// SingleRun: fewer than two runs measured a TTFT, so there is no spread to judge.
	SingleRun Stability = "single-run"
)

// Thresholds of the stability rule, as fractions of the median of run medians.
const (
	StableWithin  = 0.10
	UnstableAbove = 0.30
)

// StabilityOf judges one figure's per-run values (e.g. median TTFTs): spread = max |mᵢ − m| / m with m the median
// of the mᵢ; spread ≤ 10% is stable, > 30% unstable, otherwise noisy. NaN entries (runs
// without a TTFT) are ignored; fewer than two remaining gives SingleRun and NaN.
func StabilityOf(runMedians []float64) (Stability, float64) {
	var vs []float64
	for _, v := range runMedians {
		if !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) < 2 {
		return SingleRun, math.NaN()
	}
	m := median(vs)
	if m <= 0 {
		return SingleRun, math.NaN()
	}
	var spread float64
	for _, v := range vs {
		spread = math.Max(spread, math.Abs(v-m)/m)
	}
	// A hair of tolerance so a spread of exactly 10% (0.9, 1.0, 1.1) is judged as a
	// person reading the rule would, not by float64 rounding.
	const eps = 1e-9
	switch {
	case spread <= StableWithin+eps:
		return Stable, spread
	case spread > UnstableAbove+eps:
		return Unstable, spread
	default:
		return Noisy, spread
	}
}

// Verdict places a measured value against a published range.
type Verdict string

const (
	Within Verdict = "within"
	Below  Verdict = "below"
	Above  Verdict = "above"
	// NoValue: the figure was not measured, so it cannot be held against the range.
	NoValue Verdict = ""
)

// Reference holds value against the inclusive range [lo, hi].
func Reference(value, lo, hi float64) Verdict {
	switch {
	case math.IsNaN(value):
		return NoValue
	case value < lo:
		return Below
	case value > hi:
		return Above
	default:
		return Within
	}
}

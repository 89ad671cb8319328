package ledger

import (
	"fmt"
	"math"

	"github.com/planrun/planrun/stats"
)

// Quality is a cell's output drift against its reference (a matrix's quality block),
// measured in a phase of its own at concurrency 1, apart from the timed levels: along the
// reference's greedy continuation of each seeded prompt, how often the cell's top token
// is the reference's, where it first differs, how far its top-k distribution is from the
// reference's, and (where the engine returns prompt log-probabilities) how much less
// likely it finds the reference's text. Every row of the cell carries the same figures;
// intervals are over prompts, at Confidence. Figures are NaN when not measured.
type Quality struct {
	// Reference names what the cell was compared with: the reference quantization
	// ("f16") or the reference cell's id. Empty on a row without quality figures.
	Reference string
	// Method is how the cell followed the reference's path: QualityFollow or
	// QualityTeacher.
	Method string
	// Prompts is the number of prompts compared; TopK the log-probabilities per position.
	Prompts, TopK int
	// Confidence is the intervals' confidence, a fraction.
	Confidence float64
	// SameTop1Pct is the % of the reference path's positions where the cell's most
	// likely token is the reference's token: the mean over prompts of each prompt's
	// rate, its interval the t interval of those rates.
	SameTop1Pct float64
	SameTop1CI  stats.Interval
	// FirstDivergence is the median over prompts of the 1-based position of the first
	// token where the cell's top token differs; a prompt without one counts as
	// output length + 1. Its interval is distribution-free (order statistics).
	FirstDivergence   float64
	FirstDivergenceCI stats.Interval
	// KLMean is the mean over positions of KL(reference ‖ cell) over the returned top-k
	// tokens with the rest of each side's mass lumped into one "other" bucket: an
	// estimate of the true KL, which it never exceeds when both sides return the same
	// tokens (coarse-graining only loses divergence). Nats; t interval of per-prompt means.
	KLMean float64
	KLCI   stats.Interval
	// LogProbDelta is the teacher-forced difference in mean log-likelihood of the
	// reference's continuation, cell − reference, nats per token (exact: every token's
	// own log-probability, from prompt log-probabilities); NaN where the engine gives
	// none. Negative: the cell finds the reference's text less likely.
	LogProbDelta   float64
	LogProbDeltaCI stats.Interval
	// FloorSameTop1Pct and FloorKLMean are the reference compared with a rerun of
	// itself by the same method: 100 and 0 on a deterministic engine; otherwise the
	// drift figures carry this floor.
	FloorSameTop1Pct, FloorKLMean float64
	// AccuracyPct is the task accuracy on the plan's own answers (quality's accuracy
	// block), with its Clopper–Pearson interval; AccuracyPrompts the prompts scored.
	AccuracyPct     float64
	AccuracyCI      stats.Interval
	AccuracyPrompts int
	// Requests is the quality requests the cell sent (the reference's own gathering and
	// rerun included on the reference's rows); Notes say what the figures rest on.
	Requests int
	Notes    string
}

// Methods of Quality.
const (
	// QualityFollow: the cell generates greedily from each prompt; where its token
	// differs from the reference's, it is sent the prompt and the reference's tokens so
	// far and generates again. One request per prompt plus one per divergence.
	QualityFollow = "follow"
	// QualityTeacher: one request per prompt holds the prompt and the reference's whole
	// continuation as token ids; the engine's prompt log-probabilities give the cell's
	// distribution at every position (vLLM's prompt_logprobs).
	QualityTeacher = "teacher"
)

// NewQuality is a Quality with nothing measured: every figure NaN, every interval
// unbounded.
func NewQuality() Quality {
	nan, u := math.NaN(), stats.Unbounded(0)
	return Quality{Confidence: nan, SameTop1Pct: nan, FirstDivergence: nan, KLMean: nan, LogProbDelta: nan,
		FloorSameTop1Pct: nan, FloorKLMean: nan, AccuracyPct: nan,
		SameTop1CI: u, FirstDivergenceCI: u, KLCI: u, LogProbDeltaCI: u, AccuracyCI: u}
}

// Measured reports whether the row has quality figures.
func (q Quality) Measured() bool { return q.Reference != "" }

// qualityFigure is one quality figure with an interval: its column (the interval's are
// name_lo and name_hi) and where the row keeps it.
type qualityFigure struct {
	name, doc string
	value     func(*Quality) *float64
	ci        func(*Quality) *stats.Interval
}

var qualityFigures = []qualityFigure{
	{"quality_same_top1_pct", "% of the reference's greedy path where the cell's top token is the reference's",
		func(q *Quality) *float64 { return &q.SameTop1Pct }, func(q *Quality) *stats.Interval { return &q.SameTop1CI }},
	{"quality_first_divergence_tokens", "median 1-based position of the first token where the cell's top token differs (output length + 1: none)",
		func(q *Quality) *float64 { return &q.FirstDivergence }, func(q *Quality) *stats.Interval { return &q.FirstDivergenceCI }},
	{"quality_kl_mean_nats", "mean KL(reference ‖ cell) over the returned top-k, the rest lumped into one bucket (an estimate)",
		func(q *Quality) *float64 { return &q.KLMean }, func(q *Quality) *stats.Interval { return &q.KLCI }},
	{"quality_logprob_delta_nats", "teacher-forced mean log-likelihood of the reference's continuation, cell − reference, per token",
		func(q *Quality) *float64 { return &q.LogProbDelta }, func(q *Quality) *stats.Interval { return &q.LogProbDeltaCI }},
	{"quality_accuracy_pct", "task accuracy on the plan's own answers",
		func(q *Quality) *float64 { return &q.AccuracyPct }, func(q *Quality) *stats.Interval { return &q.AccuracyCI }},
}

// qualityColumns are the quality figures, appended after every earlier format's
// columns so older ledgers upgrade in place (their rows read back unmeasured).
func qualityColumns() []column {
	q := func(r *Row) *Quality { return &r.Quality }
	c := []column{
		strCol("quality_reference", func(r *Row) *string { return &q(r).Reference }),
		strCol("quality_method", func(r *Row) *string { return &q(r).Method }),
		intCol("quality_prompts", func(r *Row) *int { return &q(r).Prompts }),
		intCol("quality_top_logprobs", func(r *Row) *int { return &q(r).TopK }),
	}
	for _, f := range qualityFigures {
		iv := func(r *Row) *stats.Interval { return f.ci(q(r)) }
		c = append(c, floatCol(f.name, 1, func(r *Row) *float64 { return f.value(q(r)) }),
			endCol(f.name+"_lo", 1, false, iv, iv), endCol(f.name+"_hi", 1, true, iv, iv))
	}
	return append(c,
		floatCol("quality_floor_same_top1_pct", 1, func(r *Row) *float64 { return &q(r).FloorSameTop1Pct }),
		floatCol("quality_floor_kl_mean_nats", 1, func(r *Row) *float64 { return &q(r).FloorKLMean }),
		intCol("quality_accuracy_prompts", func(r *Row) *int { return &q(r).AccuracyPrompts }),
		floatCol("quality_confidence_pct", 100, func(r *Row) *float64 { return &q(r).Confidence }),
		intCol("quality_requests", func(r *Row) *int { return &q(r).Requests }),
		strCol("quality_notes", func(r *Row) *string { return &q(r).Notes }),
	)
}

// qualityFields are result.quality_*: the figures, their intervals' ends, the floor and
// the reference's name; null where the cell has no quality figures.
var qualityFields = func() []ResultField {
	out := []ResultField{
		strField("quality_reference", "what the quality figures compare against: the reference quantization or cell", func(r *Row) string { return r.Quality.Reference }),
		strField("quality_method", "how the cell followed the reference's path: follow or teacher", func(r *Row) string { return r.Quality.Method }),
		intField("quality_prompts", "prompts behind the quality figures", func(r *Row) int { return r.Quality.Prompts }),
	}
	for _, f := range qualityFigures {
		unit := columnUnit(column{name: f.name, kind: kindNumber})
		out = append(out, numField(f.name, unit, f.doc, 1, func(r *Row) float64 { return *f.value(&r.Quality) }))
		for _, hi := range []bool{false, true} {
			name, doc := f.name+"_lo", "lower end of the interval of "+f.name
			if hi {
				name, doc = f.name+"_hi", "upper end of the interval of "+f.name
			}
			out = append(out, numField(name, unit, doc, 1, func(r *Row) float64 {
				iv := f.ci(&r.Quality)
				if hi {
					return iv.Hi
				}
				return iv.Lo
			}))
		}
	}
	return append(out,
		numField("quality_floor_same_top1_pct", "%", "the reference against a rerun of itself: 100 on a deterministic engine", 1,
			func(r *Row) float64 { return r.Quality.FloorSameTop1Pct }),
		numField("quality_floor_kl_mean_nats", "nats", "the reference against a rerun of itself: 0 on a deterministic engine", 1,
			func(r *Row) float64 { return r.Quality.FloorKLMean }))
}()

// QualityText is the seed table's Quality cell: "vs f16: 97.1% same top-1, KL 0.012",
// with the floor when the reference is not deterministic; "reference" on the
// reference's own rows, "" without figures.
func QualityText(r Row) string {
	q := r.Quality
	if !q.Measured() {
		return ""
	}
	if q.Reference == r.QuantShown() || q.Reference == r.CellID {
		s := "reference"
		if !math.IsNaN(q.FloorSameTop1Pct) && q.FloorSameTop1Pct < 100 {
			s += fmt.Sprintf(" (not deterministic: %.1f%% same top-1 against a rerun)", q.FloorSameTop1Pct)
		}
		return s
	}
	s := fmt.Sprintf("vs %s: %.1f%% same top-1", q.Reference, q.SameTop1Pct)
	if !math.IsNaN(q.KLMean) {
		s += ", KL " + FormatFloat(roundSig(q.KLMean, 2))
	}
	if !math.IsNaN(q.LogProbDelta) {
		s += fmt.Sprintf(", Δlogp %+.3f", q.LogProbDelta)
	}
	if !math.IsNaN(q.AccuracyPct) {
		s += fmt.Sprintf(", accuracy %.0f%%", q.AccuracyPct)
	}
	if !math.IsNaN(q.FloorSameTop1Pct) && q.FloorSameTop1Pct < 100 {
		s += fmt.Sprintf(" (floor %.1f%%)", q.FloorSameTop1Pct)
	}
	return s
}

// roundSig rounds v to n significant digits, for figures whose size varies by decades.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(n-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

package ledger

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/stats"
)

// Intervals are a row's confidence intervals beyond its distributions' own (each Dist's
// CI): the rates' across repeat runs (the median run's, distribution-free, unbounded
// with fewer than 6 runs at 95%), SLO attainment's over the requests, and the
// stability figure's in words.
type Intervals struct {
	// Confidence is the intervals' confidence, a fraction; NaN in a row written before
	// intervals.
	Confidence       float64
	OutputTokS       stats.Interval
	GoodputTokS      stats.Interval
	GoodputReqS      stats.Interval
	SLOAttainmentPct stats.Interval
	// Stability states the stability figure (median TTFT) across runs as an interval:
	// the median run's at Confidence, or with fewer runs the min–max and its confidence.
	Stability string
}

func newIntervals() Intervals {
	u := stats.Unbounded(0)
	return Intervals{Confidence: math.NaN(), OutputTokS: u, GoodputTokS: u, GoodputReqS: u, SLOAttainmentPct: u}
}

// IntervalPercentiles are the percentiles whose intervals the ledger has columns for
// (the rest are in summary.json).
var IntervalPercentiles = []int{50, 99}

// setIntervals fills the row's intervals from its level's runs.
func (r *Row) setIntervals(s stats.Runs) {
	a := s.Across
	r.CI = Intervals{Confidence: s.Pooled.Confidence, OutputTokS: a.OutputTokS, GoodputTokS: a.GoodputTokS,
		GoodputReqS: a.GoodputReqS, SLOAttainmentPct: s.Pooled.SLOAttainmentCI.Scale(100)}
	if s.Pooled.Confidence == 0 {
		r.CI.Confidence = math.NaN()
	}
	r.CI.Stability = stabilityInterval(s)
}

// stabilityInterval is the seed's stability test ("the same plan three times, TTFT within
// ±10%") as an interval: with enough runs the median run's median TTFT at the row's
// confidence, else the smallest and largest run's and how sure that is.
func stabilityInterval(s stats.Runs) string {
	a := s.Across
	figs := make([]float64, 0, len(s.PerRun))
	for _, l := range s.PerRun {
		v := l.TTFT.P50
		if math.IsNaN(v) {
			v = l.E2E.P50
		}
		if !math.IsNaN(v) {
			figs = append(figs, v)
		}
	}
	if len(figs) < 2 {
		return ""
	}
	conf := fmt.Sprintf("%g%%", 100*a.Confidence)
	if a.TTFTP50.Bounded() {
		mid := median(figs)
		return fmt.Sprintf("%d runs: the median run's %s interval %s–%s s (±%.1f%%)", len(figs), conf,
			FormatFloat(a.TTFTP50.Lo), FormatFloat(a.TTFTP50.Hi), 100*a.TTFTP50.HalfWidth(mid))
	}
	lo, hi := figs[0], figs[0]
	for _, v := range figs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	mid := median(figs)
	return fmt.Sprintf("%d runs: min–max %s–%s s (±%.1f%%) is a %g%% interval of the median run; %s needs %d runs",
		len(figs), FormatFloat(lo), FormatFloat(hi), 100*math.Max(mid-lo, hi-mid)/mid, 100*a.MinMax, conf, a.TTFTP50.Need)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ciOf is the interval of the p-th percentile of d, unbounded when d has none.
func ciOf(d *stats.Dist, p int) *stats.Interval {
	if d.CI == nil {
		u := stats.Unbounded(0)
		return &u
	}
	switch p {
	case 50:
		return &d.CI.P50
	case 90:
		return &d.CI.P90
	case 95:
		return &d.CI.P95
	case 99:
		return &d.CI.P99
	}
	return &d.CI.Mean
}

// ciSet is where a column parsed from a ledger writes a distribution's interval end.
func ciSet(d *stats.Dist, p int) *stats.Interval {
	if d.CI == nil {
		u := stats.Unbounded(0)
		d.CI = &stats.DistCI{Confidence: math.NaN(), P50: u, P90: u, P95: u, P99: u, Mean: u}
	}
	return ciOf(d, p)
}

// endCol is the column of one end (lo or hi) of an interval, written ·scale.
func endCol(name string, scale float64, hi bool, get func(*Row) *stats.Interval, set func(*Row) *stats.Interval) column {
	end := func(iv *stats.Interval) *float64 {
		if hi {
			return &iv.Hi
		}
		return &iv.Lo
	}
	return column{name,
		func(r *Row) string { return FormatFloat(*end(get(r)) * scale) },
		func(r *Row, s string) error {
			if s == "" {
				return nil // unbounded, as a new row's is
			}
			v, err := strconv.ParseFloat(s, 64)
			*end(set(r)) = v / scale
			return err
		}, kindNumber}
}

// intervalFigure is one figure with an interval in the ledger: its column name (the
// interval's are name_lo and name_hi), and where the row keeps the interval (in the
// row's units: seconds for a Dist) with the scale to the column's.
type intervalFigure struct {
	name     string
	scale    float64
	get, set func(*Row) *stats.Interval
}

// intervalFigures are the figures the tables show, with the ledger's interval columns.
var intervalFigures = func() []intervalFigure {
	var out []intervalFigure
	for _, d := range LatencyDists {
		for _, p := range IntervalPercentiles {
			out = append(out, intervalFigure{fmt.Sprintf("%s_p%d_%s", d.Prefix, p, d.Unit), d.Scale,
				func(r *Row) *stats.Interval { return ciOf(d.Get(r), p) },
				func(r *Row) *stats.Interval { return ciSet(d.Get(r), p) }})
		}
	}
	rate := func(name string, f func(*Intervals) *stats.Interval) intervalFigure {
		return intervalFigure{name, 1, func(r *Row) *stats.Interval { return f(&r.CI) }, func(r *Row) *stats.Interval { return f(&r.CI) }}
	}
	return append(out,
		rate("output_tok_s", func(c *Intervals) *stats.Interval { return &c.OutputTokS }),
		rate("goodput_tok_s", func(c *Intervals) *stats.Interval { return &c.GoodputTokS }),
		rate("goodput_requests_s", func(c *Intervals) *stats.Interval { return &c.GoodputReqS }),
		rate("slo_attainment_pct", func(c *Intervals) *stats.Interval { return &c.SLOAttainmentPct }),
		intervalFigure{"cost_per_mtok", 1, func(r *Row) *stats.Interval { return &r.CostCI }, func(r *Row) *stats.Interval { return &r.CostCI }})
}()

// intervalColumns are the interval columns, appended after every earlier format's so
// older ledgers upgrade in place (their rows read back with no intervals).
func intervalColumns() []column {
	var c []column
	for _, f := range intervalFigures {
		c = append(c, endCol(f.name+"_lo", f.scale, false, f.get, f.set), endCol(f.name+"_hi", f.scale, true, f.get, f.set))
	}
	return append(c,
		floatCol("confidence_pct", 100, func(r *Row) *float64 { return &r.CI.Confidence }),
		strCol("stability_ci", func(r *Row) *string { return &r.CI.Stability }))
}

// Interval is the confidence interval of the row's figure name (a ledger column such
// as ttft_p99_s, in its units) and the confidence; ok is false when the ledger has no
// interval for that figure or the row was written before intervals (its confidence is
// unknown). An end the row's sample could not bound is NaN.
func (r *Row) Interval(name string) (iv stats.Interval, conf float64, ok bool) {
	if math.IsNaN(r.CI.Confidence) || r.CI.Confidence <= 0 {
		return stats.Unbounded(0), math.NaN(), false
	}
	for _, f := range intervalFigures {
		if f.name == name {
			return f.get(r).Scale(f.scale), r.CI.Confidence, true
		}
	}
	return stats.Unbounded(0), r.CI.Confidence, false
}

// IntervalNotes say, for the row's notes, which percentiles of its headline
// distribution (TTFT, or E2E where there is none) its requests could not bound and how
// many would, and which rates its runs could not; nil when all are bounded or the row
// has no intervals.
func IntervalNotes(r *Row) []string {
	if math.IsNaN(r.CI.Confidence) || r.Succeeded == 0 {
		return nil
	}
	conf := fmt.Sprintf("%g%%", 100*r.CI.Confidence)
	d := &r.TTFT
	if math.IsNaN(d.P50) {
		d = &r.E2E
	}
	var out []string
	if d.CI != nil {
		var ps []string
		need := 0
		for _, p := range stats.Percentiles {
			if iv, _ := d.CI.At(p); !iv.Bounded() && iv.Need > 0 {
				ps = append(ps, fmt.Sprintf("p%d", p))
				need = iv.Need
			}
		}
		if len(ps) > 0 {
			out = append(out, fmt.Sprintf("no %s interval for %s from %d requests (%s needs %d)",
				conf, strings.Join(ps, ", "), r.Succeeded, ps[len(ps)-1], need))
		}
	}
	if !r.CI.OutputTokS.Bounded() && r.CI.OutputTokS.Need > 0 && r.Runs > 1 {
		out = append(out, fmt.Sprintf("no %s interval for tok/s from %d runs (needs %d)", conf, r.Runs, r.CI.OutputTokS.Need))
	}
	return out
}

// intervalFields are result.<figure>_lo and _hi for expect and goal: the ends of the
// intervals the ledger keeps, null where the sample could not bound them.
func intervalFields() []ResultField {
	var out []ResultField
	for _, f := range intervalFigures {
		unit := columnUnit(column{name: f.name, kind: kindNumber})
		for _, hi := range []bool{false, true} {
			name, doc := f.name+"_lo", "lower end of the interval of "+f.name
			if hi {
				name, doc = f.name+"_hi", "upper end of the interval of "+f.name
			}
			out = append(out, ResultField{Name: name, Type: cty.Number, Unit: unit, Doc: doc,
				Value: func(r *Row) cty.Value {
					v := f.get(r).Lo
					if hi {
						v = f.get(r).Hi
					}
					if math.IsNaN(v) || math.IsNaN(r.CI.Confidence) {
						return cty.NullVal(cty.Number)
					}
					return cty.NumberFloatVal(v * f.scale)
				}})
		}
	}
	return out
}

// RowIntervals are one row's intervals in summary.json: every distribution's percentiles
// and mean, the rates and the attainment, in the CSV's units, named as its columns
// (ttft_p90_s, tpot_mean_ms, output_tok_s, ...).
type RowIntervals struct {
	CellID      string                    `json:"cell_id"`
	Concurrency int                       `json:"concurrency"`
	RequestRate JSONFloat                 `json:"request_rate,omitempty"`
	Confidence  float64                   `json:"confidence"`
	Figures     map[string]stats.Interval `json:"figures"`
}

// rowIntervals are the rows' intervals for summary.json; rows from before intervals
// (and failed rows) have none.
func rowIntervals(rows []Row) []RowIntervals {
	var out []RowIntervals
	for i := range rows {
		r := &rows[i]
		if math.IsNaN(r.CI.Confidence) || r.Succeeded == 0 {
			continue
		}
		ri := RowIntervals{CellID: r.CellID, Concurrency: r.Concurrency, RequestRate: JSONFloat(r.RequestRate),
			Confidence: r.CI.Confidence, Figures: map[string]stats.Interval{}}
		for _, d := range slices.Concat(rowDists, reasoningDists, toolDists) {
			x := d.Get(r)
			if x.CI == nil || math.IsNaN(x.P50) {
				continue
			}
			for _, p := range stats.Percentiles {
				iv, _ := x.CI.At(p)
				ri.Figures[fmt.Sprintf("%s_p%d_%s", d.Prefix, p, d.Unit)] = iv.Scale(d.Scale)
			}
			ri.Figures[d.Prefix+"_mean_"+d.Unit] = x.CI.Mean.Scale(d.Scale)
		}
		for _, f := range intervalFigures {
			if v := fieldOf(r, f.name); !math.IsNaN(v) { // the rates and the attainment
				ri.Figures[f.name] = f.get(r).Scale(f.scale)
			}
		}
		out = append(out, ri)
	}
	return out
}

// fieldOf is the row's rate or attainment figure named name, NaN when not measured.
func fieldOf(r *Row, name string) float64 {
	switch name {
	case "output_tok_s":
		return r.OutputTokS
	case "goodput_tok_s":
		return r.GoodputTokS
	case "goodput_requests_s":
		return r.GoodputReqS
	case "slo_attainment_pct":
		return r.SLOAttainmentPct
	case "cost_per_mtok":
		return r.CostPerMTok
	}
	return math.NaN()
}

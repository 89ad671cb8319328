package compare

import (
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// Verdict is a gate's answer for one row and threshold, judged on the interval of the
// change: Pass when all of it is on the threshold's good side, Fail when all of it is
// beyond, Indeterminate when it straddles the limit (noise could be either).
type Verdict string

const (
	Pass          Verdict = "pass"
	Fail          Verdict = "fail"
	Indeterminate Verdict = "indeterminate"
)

// PlanPower is the chance that a rerun with the requests a gate says would resolve an
// indeterminate answer does resolve it, if the change is what it measured.
const PlanPower = 0.95

// ChangeInterval is the interval of the change from A to B (Δ% when percent, else
// B − A) from each side's own interval, by the method of variance estimates recovery
// (MOVER: Zou and Donner 2008): each end of the difference adds the two sides' matching
// half-widths in quadrature. A Δ% is worked on the log scale (ln B − ln A, then back), so
// it is a ratio's interval and never spans below −100%. An end either side cannot bound
// is infinite.
func ChangeInterval(a, b float64, ia, ib stats.Interval, percent bool) (lo, hi float64) {
	inf := math.Inf(1)
	x, y := func(v float64) float64 { return v }, func(v float64) float64 { return v }
	if percent {
		if a <= 0 || b <= 0 {
			return math.NaN(), math.NaN()
		}
		x = math.Log
		y = func(v float64) float64 { return (math.Exp(v) - 1) * 100 }
	}
	tr := func(v float64, far float64) float64 { // x(v), with an unbounded or non-positive end at far
		if math.IsNaN(v) || (percent && v <= 0) {
			return far
		}
		return x(v)
	}
	d := x(b) - x(a)
	// lo: B as low as it may be, A as high.
	bl, ah := x(b)-tr(ib.Lo, -inf), tr(ia.Hi, inf)-x(a)
	// hi: B as high, A as low.
	bh, al := tr(ib.Hi, inf)-x(b), x(a)-tr(ia.Lo, -inf)
	lo, hi = d-math.Hypot(math.Max(bl, 0), math.Max(ah, 0)), d+math.Hypot(math.Max(bh, 0), math.Max(al, 0))
	return y(lo), y(hi)
}

// judge is the verdict on a change interval [lo, hi] against t.
func judge(t Threshold, lo, hi float64) Verdict {
	if t.Op == '>' {
		switch {
		case lo > t.Limit:
			return Fail
		case hi <= t.Limit:
			return Pass
		}
		return Indeterminate
	}
	switch {
	case hi < t.Limit:
		return Fail
	case lo >= t.Limit:
		return Pass
	}
	return Indeterminate
}

// requestsToResolve is how many requests (or runs, for a rate across runs) a side would
// resolve an indeterminate verdict: the change interval [lo, hi] measured on n a side,
// around by, narrows as 1/√n, and must clear the limit with the margin that gives
// PlanPower if the change is what it measured: n·((z_c + z_power)/z_c · w/|by − limit|)²,
// w the half-width on the limit's side. An interval a side cannot bound needs at least
// bound (what bounds the figure) first; 0 when the change sits on the limit itself
// (no count resolves it).
func requestsToResolve(t Threshold, by, lo, hi float64, n, bound int, conf float64) int {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		return max(bound, n+1)
	}
	dist := math.Abs(by - t.Limit)
	if dist == 0 || n <= 0 {
		return 0
	}
	w := by - lo
	if t.Limit > by {
		w = hi - by
	}
	norm := distuv.UnitNormal
	zc, zp := norm.Quantile(1-(1-conf)/2), norm.Quantile(PlanPower)
	need := float64(n) * math.Pow((zc+zp)/zc*w/dist, 2)
	if need > 1e9 {
		return 0
	}
	return max(int(math.Ceil(need)), n+1)
}

// boundFor is what bounds a figure at conf: requests for a percentile, MinConclusiveRequests
// for another per-request figure, runs for a rate across runs.
func boundFor(field string, conf float64) (need int, unit string) {
	if isAcrossRuns(field) {
		return stats.RequestsToBound(0.5, conf), "runs"
	}
	return RequestsToConcludeAt(field, conf), "requests"
}

// isAcrossRuns reports whether a figure's interval is across repeat runs (a rate).
func isAcrossRuns(field string) bool {
	// A cost from an hourly price moves with the throughput across runs.
	return strings.HasSuffix(field, "_tok_s") || field == "goodput_requests_s" || field == "cost_per_mtok"
}

// intervalsOf are the intervals of a figure on both rows and their confidence; ok is
// false when either row has none (a ledger written before intervals), and the gate then
// judges the point change as it did before.
func intervalsOf(field string, a, b *ledger.Row) (ia, ib stats.Interval, conf float64, ok bool) {
	ia, ca, oka := a.Interval(field)
	ib, cb, okb := b.Interval(field)
	if !oka || !okb {
		return ia, ib, math.NaN(), false
	}
	return ia, ib, math.Min(ca, cb), true
}

// RequestsToSettle is how many requests a run whose figure v, measured on n, has its
// interval's end near on the side of edge would need for that end to clear edge with
// PlanPower: the rule requestsToResolve applies to a change, on one figure. 0 when v sits
// on the edge or the end is unbounded (then bound it first).
func RequestsToSettle(v, near, edge float64, n int, conf float64) int {
	if math.IsNaN(near) || math.IsNaN(v) || v == edge || n <= 0 {
		return 0
	}
	lo, hi := near, 2*v-near
	if near > v {
		lo, hi = 2*v-near, near
	}
	t := Threshold{Op: '>', Limit: edge}
	if edge > v {
		t.Op = '<'
	}
	return requestsToResolve(t, v, lo, hi, n, 0, conf)
}

// SettleCount is how many requests (or runs, as unit says: a rate's interval is across
// repeat runs) a row would need for an interval [lo, hi] around by to clear limit with
// PlanPower: the rule requestsToResolve applies to a gate's change, for any answer that
// is a figure against a limit. A decision uses it twice: the change from the chosen row
// to the runner-up against 0, and a constraint's figure against its limit. requests and
// runs are what the row (or the smaller of two) measured; an end that is unbounded (NaN
// or infinite) needs at least what bounds the field first.
func SettleCount(field string, by, lo, hi, limit float64, requests, runs int, conf float64) (need int, unit string) {
	bound, unit := boundFor(field, conf)
	n := requests
	if unit == "runs" {
		n = runs
	}
	if math.IsNaN(lo) {
		lo = math.Inf(-1)
	}
	if math.IsNaN(hi) {
		hi = math.Inf(1)
	}
	return requestsToResolve(Threshold{Op: '>', Limit: limit}, by, lo, hi, n, bound, conf), unit
}

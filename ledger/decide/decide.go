// Package decide answers a plan's decision block from a run's rows: which cell and
// level to run, the runner-up, and whether the choice is sure (the objective's intervals
// do not overlap), indeterminate (they do, or a constraint's interval straddles its
// limit, with how many more requests would settle it) or none (no row meets the
// constraints, each excluded row with what it broke and by how much). Every figure is
// read through ledger.ResultFields by name, with its interval from the fields
// <name>_lo and <name>_hi where the table has them, so a constraint or objective on a
// field added later (a quality figure) needs nothing here.
package decide

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/stats"
)

// Decide judges spec over rows (the rows the decision covers: the caller applies
// spec.Cells). Rows that did not finish ok are excluded with their status.
func Decide(spec ledger.DecisionSpec, rows []ledger.Row) ledger.Decision {
	d := ledger.Decision{DecisionSpec: spec, Confidence: ledger.JSONFloat(math.NaN()), Candidates: []ledger.Candidate{}}
	names := ledger.CellNames(rows)
	var eligible, excluded []ledger.Candidate
	for i := range rows {
		r := &rows[i]
		if conf := r.CI.Confidence; !math.IsNaN(conf) && conf > 0 {
			d.Confidence = ledger.JSONFloat(conf)
		}
		c := candidate(spec, r, names[r.CellID])
		if c.Status == ledger.CandidateExcluded {
			excluded = append(excluded, c)
		} else {
			eligible = append(eligible, c)
		}
	}
	slices.SortStableFunc(eligible, func(a, b ledger.Candidate) int {
		if c := cmp.Compare(a.Value, b.Value); c != 0 {
			if spec.Objective.Maximize {
				return -c
			}
			return c
		}
		return cmp.Or(cmp.Compare(a.Cell, b.Cell), cmp.Compare(a.Concurrency, b.Concurrency), cmp.Compare(a.RequestRate, b.RequestRate))
	})
	d.Candidates = append(append(d.Candidates, eligible...), excluded...)
	if len(eligible) == 0 {
		d.Outcome = ledger.DecisionNone
		d.Reason = fmt.Sprintf("no row meets the constraints (%d excluded)", len(excluded))
		if len(rows) == 0 {
			d.Reason = "no rows to decide among"
		}
		return d
	}
	d.Chosen = &eligible[0]
	d.RunnerUp = runnerUp(eligible)
	judge(&d)
	return d
}

// runnerUp is the best eligible row of another cell than the chosen one's, or, when
// every eligible row is the chosen cell's, its next level.
func runnerUp(eligible []ledger.Candidate) *ledger.Candidate {
	for i := 1; i < len(eligible); i++ {
		if eligible[i].Cell != eligible[0].Cell {
			return &eligible[i]
		}
	}
	if len(eligible) > 1 {
		return &eligible[1]
	}
	return nil
}

// judge sets the outcome of a decision that chose a row: indeterminate when one of the
// chosen row's constraints straddles its limit, or when its objective's interval
// overlaps the runner-up's; sure otherwise.
func judge(d *ledger.Decision) {
	ch, ru := d.Chosen, d.RunnerUp
	conf := float64(d.Confidence)
	if math.IsNaN(conf) {
		conf = stats.DefaultConfidence
	}
	if ch.Status == ledger.CandidateUnsure {
		d.Outcome = ledger.DecisionIndeterminate
		for _, c := range ch.Broken() {
			d.Reason = fmt.Sprintf("%s is best on %s, but its %s straddles the limit %s", ch.Name+" "+ch.Level(),
				d.Objective.Field, c.Field, fmtNum(c.Limit))
			d.Need, d.NeedUnit = c.Need, c.NeedUnit
			break
		}
		return
	}
	if ru == nil {
		d.Outcome = ledger.DecisionSure
		d.Reason = fmt.Sprintf("%s %s is the only row that meets the constraints", ch.Name, ch.Level())
		return
	}
	if !hasInterval(*ch) && !hasInterval(*ru) {
		d.Outcome = ledger.DecisionSure
		d.Reason = fmt.Sprintf("%s has no interval: judged on the figures as measured", d.Objective.Field)
		if ch.Value == ru.Value {
			d.Outcome = ledger.DecisionIndeterminate
			d.Reason = fmt.Sprintf("%s and %s measured the same %s", ch.Name+" "+ch.Level(), ru.Name+" "+ru.Level(), d.Objective.Field)
		}
		return
	}
	if apart(*ch, *ru, d.Objective.Maximize) {
		d.Outcome = ledger.DecisionSure
		d.Reason = fmt.Sprintf("the %s intervals of %s and the runner-up do not overlap", d.Objective.Field, ch.Name+" "+ch.Level())
		return
	}
	d.Outcome = ledger.DecisionIndeterminate
	a, b := float64(ch.Value), float64(ru.Value)
	lo, hi := compare.ChangeInterval(a, b, stats.Interval{Lo: float64(ch.Lo), Hi: float64(ch.Hi)},
		stats.Interval{Lo: float64(ru.Lo), Hi: float64(ru.Hi)}, false)
	d.Need, d.NeedUnit = compare.SettleCount(d.Objective.Field, b-a, lo, hi, 0,
		min(ch.Requests, ru.Requests), min(ch.Runs, ru.Runs), conf)
	d.Reason = fmt.Sprintf("the %s intervals of %s and the runner-up overlap", d.Objective.Field, ch.Name+" "+ch.Level())
	if !bounded(*ch) || !bounded(*ru) {
		d.Reason = fmt.Sprintf("the rows cannot bound %s at %g%%", d.Objective.Field, 100*conf)
	}
}

// apart reports whether the chosen row's interval lies wholly on the better side of the
// runner-up's; an unbounded end overlaps everything.
func apart(ch, ru ledger.Candidate, maximize bool) bool {
	if !bounded(ch) || !bounded(ru) {
		return false
	}
	if maximize {
		return ch.Lo > ru.Hi
	}
	return ch.Hi < ru.Lo
}

func bounded(c ledger.Candidate) bool {
	return !math.IsNaN(float64(c.Lo)) && !math.IsNaN(float64(c.Hi))
}

// hasInterval reports whether the candidate's objective is a figure with an interval at
// all (bounded or not); without one the figure is judged as measured.
func hasInterval(c ledger.Candidate) bool { return !c.Exact }

// candidate judges one row: its objective figure and interval, and each constraint.
func candidate(spec ledger.DecisionSpec, r *ledger.Row, name string) ledger.Candidate {
	c := ledger.Candidate{Cell: r.CellID, Concurrency: r.Concurrency, RequestRate: ledger.JSONFloat(r.RequestRate),
		Name: name, Requests: r.Succeeded, Runs: r.Runs}
	if c.Name == "" {
		c.Name = r.CellID
	}
	v, iv, has := Figure(r, spec.Objective.Field)
	c.Value, c.Lo, c.Hi = ledger.JSONFloat(v), ledger.JSONFloat(iv.Lo), ledger.JSONFloat(iv.Hi)
	c.Exact = !has
	c.Status = ledger.CandidateQualified
	if r.Status != "" && r.Status != ledger.StatusOK {
		c.Status = ledger.CandidateExcluded
		nan := ledger.JSONFloat(math.NaN())
		c.Checks = append(c.Checks, ledger.Check{DecisionConstraint: ledger.DecisionConstraint{Field: "status"},
			Value: nan, Lo: nan, Hi: nan, By: nan, Verdict: ledger.CheckFail, Note: "the level ended " + r.Status})
	}
	if math.IsNaN(v) {
		c.Status = ledger.CandidateExcluded
		c.Checks = append(c.Checks, ledger.Check{DecisionConstraint: ledger.DecisionConstraint{Field: spec.Objective.Field},
			Value: c.Value, Lo: c.Value, Hi: c.Value, Verdict: ledger.CheckNotMeasured, By: ledger.JSONFloat(math.NaN())})
	}
	for _, k := range spec.Constraints {
		ch := check(k, r)
		c.Checks = append(c.Checks, ch)
		switch ch.Verdict {
		case ledger.CheckFail, ledger.CheckNotMeasured:
			c.Status = ledger.CandidateExcluded
		case ledger.CheckIndeterminate:
			if c.Status == ledger.CandidateQualified {
				c.Status = ledger.CandidateUnsure
			}
		}
	}
	return c
}

// check judges one constraint on a row: on the figure's interval where the table has
// one (pass when all of it meets the limit, fail when all of it breaks it, else
// indeterminate with how many requests would settle it), else on the figure itself.
func check(k ledger.DecisionConstraint, r *ledger.Row) ledger.Check {
	v, iv, has := Figure(r, k.Field)
	ch := ledger.Check{DecisionConstraint: k, Value: ledger.JSONFloat(v), Lo: ledger.JSONFloat(iv.Lo),
		Hi: ledger.JSONFloat(iv.Hi), By: ledger.JSONFloat(math.NaN())}
	if math.IsNaN(v) {
		ch.Verdict = ledger.CheckNotMeasured
		return ch
	}
	upper := k.Op == "<=" || k.Op == "<" // a ceiling: the interval's top must meet it
	ch.Verdict = ledger.CheckFail
	if meets(k, v) {
		ch.Verdict = ledger.CheckPass
	}
	if has {
		// An unbounded end reaches past any limit.
		worst, best := iv.Hi, iv.Lo
		if !upper {
			worst, best = iv.Lo, iv.Hi
		}
		switch {
		case !math.IsNaN(worst) && meets(k, worst):
			ch.Verdict = ledger.CheckPass
		case !math.IsNaN(best) && !meets(k, best):
			ch.Verdict = ledger.CheckFail
		default:
			ch.Verdict = ledger.CheckIndeterminate
			conf := r.CI.Confidence
			if math.IsNaN(conf) || conf <= 0 {
				conf = stats.DefaultConfidence
			}
			ch.Need, ch.NeedUnit = compare.SettleCount(k.Field, v, iv.Lo, iv.Hi, k.Limit, r.Succeeded, r.Runs, conf)
		}
	}
	if ch.Verdict == ledger.CheckFail {
		ch.By = ledger.JSONFloat(v - k.Limit)
	}
	return ch
}

// meets says whether x meets the constraint's limit.
func meets(k ledger.DecisionConstraint, x float64) bool {
	switch k.Op {
	case "<=":
		return x <= k.Limit
	case "<":
		return x < k.Limit
	case ">=":
		return x >= k.Limit
	}
	return x > k.Limit
}

// Figure is the row's figure for the result.* field name, NaN when it is not measured
// (or no such field), and its interval where the table has <name>_lo and <name>_hi
// (has; an end the row could not bound is NaN); without them iv is unbounded and has
// false.
func Figure(r *ledger.Row, name string) (v float64, iv stats.Interval, has bool) {
	iv = stats.Unbounded(0)
	f, ok := ledger.ResultFieldNamed(name)
	if !ok || f.Type != cty.Number {
		return math.NaN(), iv, false
	}
	v = number(f.Value(r))
	lo, okLo := ledger.ResultFieldNamed(name + "_lo")
	hi, okHi := ledger.ResultFieldNamed(name + "_hi")
	if !okLo || !okHi {
		return v, iv, false
	}
	iv.Lo, iv.Hi = number(lo.Value(r)), number(hi.Value(r))
	return v, iv, true
}

// HasField reports whether name is a numeric result.* field a decision can read.
func HasField(name string) bool {
	f, ok := ledger.ResultFieldNamed(name)
	return ok && f.Type == cty.Number
}

func number(v cty.Value) float64 {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return math.NaN()
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

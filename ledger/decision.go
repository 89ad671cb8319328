package ledger

import (
	"fmt"
	"strconv"
)

// DecisionSpec is what a plan's decision block asks, as summary.json records it: one
// objective over a result.* field, the constraints a row must meet, and the cell globs
// it chooses among (empty: every cell).
type DecisionSpec struct {
	Name        string               `json:"name"`
	Objective   DecisionObjective    `json:"objective"`
	Constraints []DecisionConstraint `json:"constraints,omitempty"`
	Cells       []string             `json:"cells,omitempty"`
}

// DecisionObjective is the figure a decision ranks rows by: a ResultFields name, the
// larger the better with Maximize, else the smaller.
type DecisionObjective struct {
	Field    string `json:"field"`
	Maximize bool   `json:"maximize"`
}

func (o DecisionObjective) String() string {
	if o.Maximize {
		return "maximize " + o.Field
	}
	return "minimize " + o.Field
}

// DecisionConstraint is one limit a row must meet: Field Op Limit, Op one of <=, <,
// >=, >.
type DecisionConstraint struct {
	Field string  `json:"field"`
	Op    string  `json:"op"`
	Limit float64 `json:"limit"`
}

func (c DecisionConstraint) String() string {
	return fmt.Sprintf("%s %s %s", c.Field, c.Op, strconv.FormatFloat(c.Limit, 'g', -1, 64))
}

// Outcomes of a decision.
const (
	// DecisionSure: the chosen row meets every constraint on its whole interval, and
	// its objective's interval does not overlap the runner-up's.
	DecisionSure = "sure"
	// DecisionIndeterminate: a choice was made, but the objective's intervals overlap or
	// one of the chosen row's constraints straddles its limit; Need says how many more
	// requests (or runs) would settle it.
	DecisionIndeterminate = "indeterminate"
	// DecisionNone: no row meets the constraints; each candidate says which it broke.
	DecisionNone = "none"
)

// Verdicts of a constraint on one row, and a candidate's standing.
const (
	CheckPass          = "pass"
	CheckFail          = "fail"
	CheckIndeterminate = "indeterminate" // the figure's interval straddles the limit
	CheckNotMeasured   = "not measured"

	CandidateQualified = "qualified" // every constraint passes
	CandidateUnsure    = "unsure"    // none fails, one or more is indeterminate
	CandidateExcluded  = "excluded"  // a constraint fails, or its figure (or the objective) was not measured
)

// Decision is a decision block's answer over a run's rows: the outcome, the chosen row
// and the runner-up (the best row of another cell, or the same cell's next level when
// there is one cell), why, and every row considered, best first, the excluded last.
type Decision struct {
	DecisionSpec
	Outcome string `json:"outcome"`
	// Confidence is the intervals' confidence (a fraction); NaN when no row had one.
	Confidence JSONFloat  `json:"confidence"`
	Chosen     *Candidate `json:"chosen,omitempty"`
	RunnerUp   *Candidate `json:"runner_up,omitempty"`
	// Reason says in a sentence why the outcome is what it is.
	Reason string `json:"reason"`
	// Need is, for an indeterminate outcome, about how many requests (or runs: NeedUnit)
	// a row would settle it; 0 when no count would (the figures are equal) or it is not
	// indeterminate.
	Need       int         `json:"needed,omitempty"`
	NeedUnit   string      `json:"needed_unit,omitempty"`
	Candidates []Candidate `json:"candidates"`
}

// Candidate is one row (cell × level) a decision considered.
type Candidate struct {
	Cell        string    `json:"cell"`
	Concurrency int       `json:"concurrency"`
	RequestRate JSONFloat `json:"request_rate,omitempty"`
	// Name is the row as a person reads it: what differs between the rows decided on.
	Name string `json:"name"`
	// Value is the objective's figure, with its interval [Lo, Hi] (NaN ends where the
	// row could not bound it, or the field has no interval).
	Value JSONFloat `json:"value"`
	Lo    JSONFloat `json:"lo"`
	Hi    JSONFloat `json:"hi"`
	// Exact is set when the field has no interval (a memory peak, a price): the figure
	// is judged as measured.
	Exact  bool    `json:"exact,omitempty"`
	Status string  `json:"status"`
	Checks []Check `json:"checks,omitempty"`
	// Requests and Runs are what the row measured (the settle counts scale them).
	Requests int `json:"requests"`
	Runs     int `json:"runs"`
}

// Check is one constraint judged on one row: the figure, its interval where the row has
// one, the verdict, and for a fail how far beyond the limit the figure is, for an
// indeterminate one how many requests (or runs) would settle it.
type Check struct {
	DecisionConstraint
	Value    JSONFloat `json:"value"`
	Lo       JSONFloat `json:"lo"`
	Hi       JSONFloat `json:"hi"`
	Verdict  string    `json:"verdict"`
	By       JSONFloat `json:"by,omitempty"`
	Need     int       `json:"needed,omitempty"`
	NeedUnit string    `json:"needed_unit,omitempty"`
	// Note says why a row is excluded other than by a limit (it did not end ok).
	Note string `json:"note,omitempty"`
}

// Level is the candidate's load level as the tables write it: "c4", or "c1 @ 2 req/s".
func (c Candidate) Level() string {
	if c.RequestRate > 0 {
		return fmt.Sprintf("c%d @ %s req/s", c.Concurrency, strconv.FormatFloat(float64(c.RequestRate), 'g', 4, 64))
	}
	return fmt.Sprintf("c%d", c.Concurrency)
}

// Broken are the checks that exclude or unsettle the candidate: fails, figures not
// measured and indeterminate ones.
func (c Candidate) Broken() []Check {
	var out []Check
	for _, ch := range c.Checks {
		if ch.Verdict != CheckPass {
			out = append(out, ch)
		}
	}
	return out
}

// ResultFieldNamed is the ResultFields entry named name.
func ResultFieldNamed(name string) (ResultField, bool) {
	for _, f := range ResultFields {
		if f.Name == name {
			return f, true
		}
	}
	return ResultField{}, false
}

// Answer is the decision in a few words, for lists across runs: "q8_0 at c4 (sure)",
// "none".
func (d Decision) Answer() string {
	if d.Chosen == nil {
		return d.Outcome
	}
	return fmt.Sprintf("%s at %s (%s)", d.Chosen.Name, d.Chosen.Level(), d.Outcome)
}

// SameAnswer reports whether two answers of one decision agree: the same outcome, and
// the same cell and level chosen.
func SameAnswer(a, b Decision) bool {
	if a.Outcome != b.Outcome || (a.Chosen == nil) != (b.Chosen == nil) {
		return false
	}
	return a.Chosen == nil || a.Chosen.Cell == b.Chosen.Cell && a.Chosen.Concurrency == b.Chosen.Concurrency &&
		a.Chosen.RequestRate == b.Chosen.RequestRate
}

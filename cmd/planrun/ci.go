package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/ledger/history"
	"github.com/planrun/planrun/ledger/junit"
	"github.com/planrun/planrun/plan"
)

// ciFlags are the CI outputs of apply and compare: JUnit XML and a short Markdown
// summary (for a CI job summary or a pull-request comment).
type ciFlags struct {
	JUnit   string
	Summary string
}

func (c *ciFlags) bindCI(fs *flag.FlagSet) {
	fs.StringVar(&c.JUnit, "junit", "", "write JUnit XML to this file: expects, references and gate verdicts as test cases")
	fs.StringVar(&c.Summary, "summary", "", "write a short Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY)")
}

// write writes the JUnit file and the summary that were asked for.
func (c *ciFlags) write(env *Env, command string, suite junit.Suite, summary string) bool {
	ok := true
	if c.JUnit != "" {
		if err := ledger.WriteFileAtomic(c.JUnit, func(w io.Writer) error { return junit.Write(w, "planrun", suite) }); err != nil {
			fmt.Fprintf(env.Stderr, "planrun %s: -junit: %v\n", command, err)
			ok = false
		}
	}
	if c.Summary != "" {
		if err := ledger.WriteFileAtomic(c.Summary, func(w io.Writer) error { _, err := io.WriteString(w, summary); return err }); err != nil {
			fmt.Fprintf(env.Stderr, "planrun %s: -summary: %v\n", command, err)
			ok = false
		}
	}
	return ok
}

// judgementCases are a rolling baseline's verdicts as test cases: a regression fails,
// insufficient data is skipped (or fails, with -insufficient fail).
func judgementCases(js []history.Judgement, insufficientFails bool) []junit.Case {
	var out []junit.Case
	for _, j := range js {
		c := junit.Case{Class: "gate", Name: j.Key.String() + " " + j.Asked}
		switch {
		case j.Verdict == history.Regressed:
			c.Failure, c.Detail = j.String(), strings.Join(j.Baseline, "\n")
		case j.Verdict == history.Indeterminate:
			c.Skipped = j.String()
		case j.Verdict == history.Insufficient && insufficientFails:
			c.Failure = j.String()
		case j.Verdict == history.Insufficient:
			c.Skipped = j.String()
		}
		out = append(out, c)
	}
	return out
}

// breachCases are a pairwise gate's row × threshold pairs as test cases.
func breachCases(deltas []compare.Delta, ts []compare.Threshold, breaches []compare.Breach, strict bool) []junit.Case {
	var out []junit.Case
	for _, d := range deltas {
		if d.A == nil || d.B == nil || compare.SameMeasurement(d.A, d.B) {
			continue
		}
		have := min(d.A.Succeeded, d.B.Succeeded)
		for _, t := range ts {
			c := junit.Case{Class: "gate", Name: d.Name() + " " + t.Text}
			// The percentile the case was judged on, where the rows could not resolve the
			// one the threshold names: a p99 threshold judged on the p95 says so.
			switch on := compare.JudgedOn(t.Field, have); on {
			case t.Field:
			case "":
				c.Name += " (too few requests to judge it)"
			default:
				c.Name += " (judged on " + on + ")"
			}
			i := slices.IndexFunc(breaches, func(b compare.Breach) bool { return b.Row == d.Name() && b.Threshold == t })
			if i >= 0 && (strict || !breaches[i].Inconclusive) {
				c.Failure = breaches[i].String()
			} else if i >= 0 {
				c.Skipped = breaches[i].String()
			}
			out = append(out, c)
		}
	}
	return out
}

// applyCases are a run's cells, expects and references as test cases.
func applyCases(p *plan.Plan, res *apply.Result) []junit.Case {
	var out []junit.Case
	for _, r := range res.Rows {
		// Every axis of the level, so levels that differ only by rate or embeddings
		// inputs are two test cases, each with its own verdicts.
		lv := plan.LevelOf(&r)
		level := r.CellID + " " + lv.String()
		cell := junit.Case{Class: "cell", Name: level}
		if r.Status != ledger.StatusOK {
			cell.Failure = r.Status + ": " + r.Notes
		}
		out = append(out, cell)
		for _, e := range p.Expects {
			if !e.Applies(r.CellID) || r.Status != ledger.StatusOK {
				continue
			}
			c := junit.Case{Class: "expect", Name: e.Name + ": " + level}
			for _, f := range res.ExpectFailures {
				if f.Expect == e.Name && f.Cell == r.CellID && f.Level == lv {
					c.Failure = f.String()
				}
			}
			out = append(out, c)
		}
		if r.Reference != "" {
			out = append(out, referenceCase(p, r, level))
		}
	}
	return out
}

// referenceCase holds a row against its reference's ranges; the message gives each
// figure and its range.
func referenceCase(p *plan.Plan, r ledger.Row, level string) junit.Case {
	c := junit.Case{Class: "reference", Name: r.Reference + ": " + level}
	i := slices.IndexFunc(p.References, func(ref *plan.Reference) bool { return ref.Name == r.Reference })
	if i < 0 {
		return c
	}
	var outside []string
	for _, m := range slices.Sorted(maps.Keys(p.References[i].Ranges)) {
		rg, v := p.References[i].Ranges[m], ledger.ReferenceFigure(&r, m)
		if !math.IsNaN(v) && (v < rg[0] || v > rg[1]) {
			outside = append(outside, fmt.Sprintf("%s = %.4g outside [%g, %g]", m, v, rg[0], rg[1]))
		}
	}
	if len(outside) > 0 {
		c.Failure = strings.Join(outside, "; ") + " (reference " + r.Reference + ": " + r.Verdict + ")"
	}
	return c
}

// judgementSummary is the Markdown summary of a rolling baseline's verdicts.
func judgementSummary(b *strings.Builder, js []history.Judgement, runID string) {
	regressed, insufficient := history.Failing(js)
	fmt.Fprintf(b, "**Rolling baseline**: %d figure(s) judged, %d regressed, %d insufficient data.\n\n", len(js), len(regressed), len(insufficient))
	for _, j := range regressed {
		fmt.Fprintf(b, "- %s\n", strings.ReplaceAll(j.String(), "|", `\|`))
	}
	if len(regressed) > 0 {
		b.WriteString("\n")
	}
	history.WriteJudgements(b, js, runID, history.FormatMarkdown)
}

// pairSummary is the Markdown summary of a pairwise comparison: its gate's verdict and
// crossings, then the table.
func pairSummary(deltas []compare.Delta, breaches []compare.Breach, la, lb string, fields []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### planrun compare %s %s\n", la, lb)
	if len(breaches) == 0 {
		b.WriteString("\nNo threshold crossed.\n")
	}
	compare.WriteBreachesMarkdown(&b, breaches)
	b.WriteString("\n")
	compare.WriteCompareMarkdown(&b, deltas, la, lb, fields...)
	return b.String()
}

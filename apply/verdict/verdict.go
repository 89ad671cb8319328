// Package verdict judges a run's rows against the plan's own questions: its expect
// blocks (the conditions that failed, with the figures that made them false), a
// workload's goal's figures, and its decision blocks answered over the rows so far.
package verdict

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/decide"
	"github.com/planrun/planrun/plan"
)

// Expects evaluates every expect block that applies to the row's cell, and
// returns those whose condition did not hold.
func Expects(p *plan.Plan, cell *plan.Cell, row ledger.Row) []Failure {
	var fs []Failure
	vals := ledger.ResultValues(&row) // what an expect condition sees as result.*
	for _, e := range p.Expects {
		if !e.Applies(cell.ID) {
			continue
		}
		ok, diags := e.Check(vals)
		if ok && !diags.HasErrors() {
			continue
		}
		msg := e.ErrorMessage
		if diags.HasErrors() {
			msg = strings.TrimSpace(diags.Error())
		}
		if msg == "" {
			msg = "condition is false"
		}
		msg += " (" + Describe(e.Condition, vals) + ")"
		lv := plan.LevelOf(&row)
		f := Failure{Expect: e.Name, Cell: cell.ID, Concurrency: row.Concurrency, Level: lv, LevelName: cell.Workload.LevelName(lv),
			Condition: source(p, e.Condition.Range()), Message: msg}
		fs = append(fs, f)
	}
	return fs
}

// source is the plan text of a range (an expect's condition), with its location.
func source(p *plan.Plan, r hcl.Range) string {
	f, ok := p.Files[r.Filename]
	if !ok || r.End.Byte > len(f.Bytes) || r.Start.Byte > r.End.Byte {
		return r.String()
	}
	return fmt.Sprintf("%s (%s:%d)", strings.Join(strings.Fields(string(f.Bytes[r.Start.Byte:r.End.Byte])), " "), filepath.Base(r.Filename), r.Start.Line)
}

// Describe names the result values a condition refers to, so a failure says which
// figures made it false.
func Describe(cond hcl.Expression, vals map[string]cty.Value) string {
	var parts []string
	seen := map[string]bool{}
	for _, tr := range cond.Variables() {
		if tr.RootName() != "result" || len(tr) < 2 {
			continue
		}
		attr, ok := tr[1].(hcl.TraverseAttr)
		if !ok || seen[attr.Name] {
			continue
		}
		seen[attr.Name] = true
		parts = append(parts, fmt.Sprintf("result.%s = %s", attr.Name, ctyString(vals[attr.Name])))
	}
	return strings.Join(parts, ", ")
}

func ctyString(v cty.Value) string {
	switch {
	case v == cty.NilVal || v.IsNull():
		return "null (not measured)"
	case v.Type() == cty.String:
		return strconv.Quote(v.AsString())
	case v.Type() == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	return v.GoString()
}

// Failure is an expect block whose condition was false (or could not be evaluated) for
// one row.
type Failure struct {
	Expect      string
	Cell        string
	Concurrency int
	// Level is the level that failed, every axis of it (plan.LevelOf its row), and
	// LevelName what messages call it (the workload's LevelName: "c=4 rate=2/s").
	Level     plan.LoadLevel
	LevelName string
	// Condition is the condition's text in the plan, with its file and line.
	Condition string
	Message   string
}

func (f Failure) String() string {
	level := f.LevelName
	if level == "" {
		level = f.Level.String()
	}
	return fmt.Sprintf("expect %q failed for %s at %s: %s; condition: %s", f.Expect, f.Cell, level, f.Message, f.Condition)
}

// Decisions answers the plan's decision blocks over the run's rows so far, each over
// the rows of the cells it covers. Embeddings rows generate no tokens and are left out.
func Decisions(p *plan.Plan, rows []ledger.Row) []ledger.Decision {
	var out []ledger.Decision
	for _, d := range p.Decisions {
		var covered []ledger.Row
		for _, r := range rows {
			if d.Applies(r.CellID) && !ledger.IsEmbeddings(r) {
				covered = append(covered, r)
			}
		}
		out = append(out, decide.Decide(d.DecisionSpec, covered))
	}
	return out
}

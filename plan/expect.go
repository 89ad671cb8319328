package plan

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/planrun/planrun/ledger"
	"github.com/zclconf/go-cty/cty"
)

// Expect is an `expect "<name>"` block: a condition on each result row, for CI gating.
type Expect struct {
	Name         string
	ErrorMessage string
	// Condition is evaluated per result with result.<name> in scope (ResultVariables).
	Condition hcl.Expression
	// Cells are globs on cell ids limiting which results are checked; empty means all.
	Cells     []string
	DeclRange hcl.Range

	ctx       *hcl.EvalContext
	cellsExpr hcl.Expression
}

// ResultVariables are the names `result.*` offers an expect condition: the names of
// ledger.ResultFields, whose types validation checks conditions against.
var ResultVariables = namesOf(ledger.ResultFields, func(f ledger.ResultField) string { return f.Name })

// namesOf lists the names of a table's rows.
func namesOf[T any](rows []T, name func(T) string) []string {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = name(r)
	}
	return names
}

var expectSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message"}, {Name: "cells"}},
}

func (l *loader) decodeExpectBlock(b *hcl.Block, ctx *hcl.EvalContext) *Expect {
	name := b.Labels[0]
	for _, prev := range l.p.Expects {
		if prev.Name == name {
			return nil
		}
	}
	e := &Expect{Name: name, DeclRange: b.DefRange, ctx: ctx}
	content, diags := b.Body.Content(expectSchema)
	l.add(diags)
	before := len(l.diags)
	if a := content.Attributes["condition"]; a != nil {
		l.checkCondition(a.Expr, ctx, scopeResult)
		e.Condition = a.Expr
	}
	e.ErrorMessage = fmt.Sprintf("expect %q failed", name)
	l.decode(content.Attributes["error_message"], ctx, &e.ErrorMessage)
	if a := content.Attributes["cells"]; a != nil && l.decode(a, ctx, &e.Cells) {
		e.cellsExpr = a.Expr
		if _, err := compileGlobs(e.Cells); err != nil {
			l.errorf(a.Expr.Range().Ptr(), "Invalid cell glob", "%s", err)
		}
	}
	// Without a condition (its absence is HCL's required-argument error) there is
	// nothing to check, and the checks over cells must not read one.
	if hasErrorsSince(l.diags, before) || e.Condition == nil {
		return nil
	}
	return e
}

// checkCondition checks an expect condition or a workload goal at validate time: it is
// evaluated with unknown values of result.*'s types (ledger.ResultFields), so a
// condition that is not true or false, or misuses a field, fails before any request.
func (l *loader) checkCondition(expr hcl.Expression, ctx *hcl.EvalContext, s scope) {
	d := l.names.checkRefs(expr, s, l.p.Files)
	l.add(d)
	if d.HasErrors() {
		return
	}
	result := map[string]cty.Value{}
	for _, f := range ledger.ResultFields {
		result[f.Name] = cty.UnknownVal(f.Type)
	}
	child := ctx.NewChild()
	child.Variables = map[string]cty.Value{"result": cty.ObjectVal(result)}
	if _, ok := expr.(hclsyntax.Node); ok {
		l.add(conditionUnitSlips(expr))
	}
	v, diags := expr.Value(child)
	if !diags.HasErrors() {
		// Unknown strings convert to anything; a sample row catches result.model > 3.
		// Only operand errors count: a function may fail on the sample (regex on "x").
		_, sample := expr.Value(sampleResultCtx(ctx))
		for _, d := range sample {
			if d.Summary == "Invalid operand" {
				d.EvalContext = child // show result.* as its type, not as the sample
				diags = append(diags, d)
			}
		}
	}
	l.add(diags)
	if diags.HasErrors() || v.Type() == cty.Bool && !v.IsNull() || v.Type() == cty.DynamicPseudoType && !v.IsKnown() {
		return
	}
	summary, what := "Invalid condition", "An expect condition"
	if s == scopeGoal {
		summary, what = "Invalid goal", "A goal"
	}
	got := "null"
	if !v.IsNull() {
		got = "a " + v.Type().FriendlyName()
	}
	l.errorIn(expr, child, expr.Range().Ptr(), summary, "%s must be true or false; this one is %s.", what, got)
}

// couldMatchMatrix reports whether glob could match an id "<matrix>/..." of one of
// the named matrices: its literal prefix (before any wildcard) agrees with "<matrix>/".
func couldMatchMatrix(glob string, matrices []string) bool {
	prefix := glob
	if i := strings.IndexAny(glob, "*?["); i >= 0 {
		prefix = glob[:i]
	}
	for _, m := range matrices {
		if strings.HasPrefix(prefix, m+"/") || strings.HasPrefix(m+"/", prefix) {
			return true
		}
	}
	return false
}

// sampleResultCtx gives result.* a measured-looking row: names "x", figures 1.
func sampleResultCtx(ctx *hcl.EvalContext) *hcl.EvalContext {
	result := map[string]cty.Value{}
	for _, f := range ledger.ResultFields {
		result[f.Name] = cty.NumberIntVal(1)
		if f.Type == cty.String {
			result[f.Name] = cty.StringVal("x")
		}
	}
	child := ctx.NewChild()
	child.Variables = map[string]cty.Value{"result": cty.ObjectVal(result)}
	return child
}

// checkCells reports each of the expectation's cell globs that matches none of cells,
// as -only does: such an expect would silently check nothing. A glob that could match
// a cell of a matrix that failed to decode (named in failed) is not judged.
func (e *Expect) checkCells(cells []*Cell, failed []string) hcl.Diagnostics {
	return unmatchedGlobs(e.Cells, e.cellsExpr, cells, failed, fmt.Sprintf("expect %q", e.Name), "check nothing")
}

// unmatchedGlobs reports each of globs (the list expr) that matches none of cells, as
// -only does: the block (what) would then do nothing (does). A glob that could match a
// cell of a matrix that failed to decode (named in failed) is not judged.
func unmatchedGlobs(globs []string, expr hcl.Expression, cells []*Cell, failed []string, what, does string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for i, g := range globs {
		gs, err := compileGlobs([]string{g})
		if err != nil || couldMatchMatrix(g, failed) {
			continue
		}
		found := false
		for _, c := range cells {
			found = found || gs[0].MatchString(c.ID)
		}
		if !found {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Cells match nothing",
				Detail:  fmt.Sprintf("The glob %q of %s matches no cell, so it would %s; run 'planrun plan' to list the cell ids.", g, what, does),
				Subject: elemRange(expr, i),
			})
		}
	}
	return diags
}

// Applies reports whether the expectation covers a cell id.
func (e *Expect) Applies(cellID string) bool {
	return len(e.Cells) == 0 || MatchCellGlobs(e.Cells, cellID)
}

// Check evaluates the condition against one result row (keys of ResultVariables). A
// condition that cannot be evaluated is not ok, with the reason in diags.
func (e *Expect) Check(result map[string]cty.Value) (ok bool, diags hcl.Diagnostics) {
	return evalCondition(e.Condition, e.ctx, result, fmt.Sprintf("expect %q", e.Name))
}

// evalCondition evaluates a condition over result.* (an expect condition, a workload
// goal); one that is not a known bool is not ok, with the reason in diags.
func evalCondition(cond hcl.Expression, parent *hcl.EvalContext, result map[string]cty.Value, what string) (bool, hcl.Diagnostics) {
	ctx := parent.NewChild()
	ctx.Variables = map[string]cty.Value{"result": cty.ObjectVal(result)}
	v, diags := cond.Value(ctx)
	if diags.HasErrors() {
		return false, diags
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Bool {
		return false, diags.Append(&hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Invalid condition",
			Detail:  fmt.Sprintf("The condition of %s must be true or false.", what),
			Subject: cond.Range().Ptr(),
		})
	}
	return v.True(), diags
}

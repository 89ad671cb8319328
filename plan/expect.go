package plan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/report"
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

	ctx *hcl.EvalContext
}

// ResultVariables are the names `result.*` offers an expect condition: the names of
// report.ResultFields, whose types validation checks conditions against.
var ResultVariables = func() []string {
	names := make([]string, len(report.ResultFields))
	for i, f := range report.ResultFields {
		names[i] = f.Name
	}
	return names
}()

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
		l.add(l.checkRefs(a.Expr, scopeResult))
		e.Condition = a.Expr
	}
	e.ErrorMessage = fmt.Sprintf("expect %q failed", name)
	l.decode(content.Attributes["error_message"], ctx, &e.ErrorMessage)
	if a := content.Attributes["cells"]; a != nil && l.decode(a, ctx, &e.Cells) {
		if _, err := compileGlobs(e.Cells); err != nil {
			l.errorf(a.Expr.Range().Ptr(), "Invalid cell glob", "%s", err)
		}
	}
	if hasErrorsSince(l.diags, before) {
		return nil
	}
	return e
}

// Applies reports whether the expectation covers a cell id.
func (e *Expect) Applies(cellID string) bool {
	if len(e.Cells) == 0 {
		return true
	}
	gs, err := compileGlobs(e.Cells)
	if err != nil {
		return false
	}
	for _, g := range gs {
		if g.MatchString(cellID) {
			return true
		}
	}
	return false
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

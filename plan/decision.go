package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/internal/suggest"
	"github.com/planrun/planrun/ledger"
)

// Decision is a `decision "<name>"` block: the question a run's report answers first,
// "which cell and level should I run?", as one objective over a result.* figure and the
// constraints a row must meet:
//
//	decision "pick" {
//	  objective   = maximize(result.output_tok_s)
//	  constraints = [result.memory_gb <= 8, result.slo_attainment_pct >= 95]
//	}
//
// Apply answers it with decide.Decide over the rows of the cells it covers.
type Decision struct {
	ledger.DecisionSpec
	DeclRange hcl.Range

	cellsExpr hcl.Expression
}

// Applies reports whether the decision chooses among the cell id's rows.
func (d *Decision) Applies(cellID string) bool {
	return len(d.Cells) == 0 || MatchCellGlobs(d.Cells, cellID)
}

var decisionSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "objective", Required: true}, {Name: "constraints"}, {Name: "cells"}},
}

// decisionGrammar is how a decision is written, for its diagnostics.
const decisionGrammar = "objective = maximize(result.output_tok_s) (or minimize(...)) and " +
	"constraints = [result.memory_gb <= 8, result.slo_attainment_pct >= 95]"

// decodeDecisionBlock decodes a decision block. The objective and constraints are read
// from their syntax (a function call, comparisons), not evaluated: a constraint is judged
// on the interval of its figure, which a boolean cannot say. Limits are expressions over
// var and local.
func decodeDecisionBlock(b *hcl.Block, ctx *hcl.EvalContext) (*Decision, hcl.Diagnostics) {
	d := &Decision{DeclRange: b.DefRange}
	d.Name = b.Labels[0]
	content, diags := b.Body.Content(decisionSchema)
	if a := content.Attributes["objective"]; a != nil {
		obj, more := decodeObjective(a.Expr)
		diags = append(diags, more...)
		d.Objective = obj
	}
	if a := content.Attributes["constraints"]; a != nil {
		cons, more := decodeConstraints(a.Expr, ctx)
		diags = append(diags, more...)
		d.Constraints = cons
	}
	if a := content.Attributes["cells"]; a != nil {
		v, more := a.Expr.Value(ctx)
		diags = append(diags, more...)
		if !more.HasErrors() {
			globs, err := stringList(v)
			if err == nil {
				_, err = compileGlobs(globs)
			}
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid cells",
					Detail: fmt.Sprintf("A decision's cells are a list of cell id globs (as -only takes): %s.", err), Subject: a.Expr.Range().Ptr()})
			}
			d.Cells, d.cellsExpr = globs, a.Expr
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return d, diags
}

// decodeObjective reads maximize(result.<field>) or minimize(result.<field>).
func decodeObjective(expr hcl.Expression) (ledger.DecisionObjective, hcl.Diagnostics) {
	var o ledger.DecisionObjective
	call, ok := expr.(*hclsyntax.FunctionCallExpr)
	if !ok || (call.Name != "maximize" && call.Name != "minimize") || len(call.Args) != 1 {
		near := ""
		if ok {
			near = suggestion(call.Name, []string{"maximize", "minimize"})
		}
		return o, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid objective",
			Detail:  "A decision's objective is maximize(result.<figure>) or minimize(result.<figure>), one figure: " + decisionGrammar + "." + near,
			Subject: expr.Range().Ptr()}}
	}
	o.Maximize = call.Name == "maximize"
	field, diags := resultField(call.Args[0], "objective")
	o.Field = field
	return o, diags
}

// constraintOps are the comparisons a constraint may use, by HCL operation.
var constraintOps = map[*hclsyntax.Operation]string{
	hclsyntax.OpLessThanOrEqual: "<=", hclsyntax.OpLessThan: "<",
	hclsyntax.OpGreaterThanOrEqual: ">=", hclsyntax.OpGreaterThan: ">",
}

// flipped is the same comparison with its sides swapped (8 >= result.x is result.x <= 8).
var flipped = map[string]string{"<=": ">=", "<": ">", ">=": "<=", ">": "<"}

// decodeConstraints reads a list of comparisons of a result.* figure with a limit.
func decodeConstraints(expr hcl.Expression, ctx *hcl.EvalContext) ([]ledger.DecisionConstraint, hcl.Diagnostics) {
	list, ok := expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid constraints",
			Detail: "A decision's constraints are a list of comparisons, each a result.* figure against a limit: " + decisionGrammar + ".", Subject: expr.Range().Ptr()}}
	}
	var out []ledger.DecisionConstraint
	var diags hcl.Diagnostics
	for _, e := range list.Exprs {
		c, more := decodeConstraint(e, ctx)
		diags = append(diags, more...)
		if !more.HasErrors() {
			out = append(out, c)
		}
	}
	return out, diags
}

func decodeConstraint(e hcl.Expression, ctx *hcl.EvalContext) (ledger.DecisionConstraint, hcl.Diagnostics) {
	var c ledger.DecisionConstraint
	bin, ok := e.(*hclsyntax.BinaryOpExpr)
	op := ""
	if ok {
		op = constraintOps[bin.Op]
	}
	if op == "" {
		return c, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid constraint",
			Detail: "A constraint compares one result.* figure with a limit by <=, <, >= or >, e.g. result.memory_gb <= 8; " +
				"it is judged on the figure's interval, so it cannot be combined with && or || (write two constraints).",
			Subject: e.Range().Ptr()}}
	}
	figure, limit := bin.LHS, bin.RHS
	if !isResultRef(figure) && isResultRef(limit) {
		figure, limit, op = limit, figure, flipped[op]
	}
	field, diags := resultField(figure, "constraint")
	if diags.HasErrors() {
		return c, diags
	}
	if isResultRefIn(limit) {
		return c, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid constraint",
			Detail: "A constraint's limit is a number (or var and local values), not another result.* figure.", Subject: limit.Range().Ptr()}}
	}
	v, more := limit.Value(ctx)
	diags = append(diags, more...)
	if more.HasErrors() {
		return c, diags
	}
	var f float64
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return c, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid constraint",
			Detail: fmt.Sprintf("The limit of a constraint on result.%s must be a number; this one is %s.", field, friendly(v)), Subject: limit.Range().Ptr()})
	}
	f, _ = v.AsBigFloat().Float64()
	if math.IsInf(f, 0) {
		return c, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid constraint",
			Detail: "The limit of a constraint must be finite.", Subject: limit.Range().Ptr()})
	}
	return ledger.DecisionConstraint{Field: field, Op: op, Limit: f}, diags
}

func friendly(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return "a " + v.Type().FriendlyName()
}

// isResultRef reports whether e is exactly a result.<name> reference.
func isResultRef(e hcl.Expression) bool {
	st, ok := e.(*hclsyntax.ScopeTraversalExpr)
	return ok && st.Traversal.RootName() == "result"
}

// isResultRefIn reports whether e refers to result anywhere.
func isResultRefIn(e hcl.Expression) bool {
	for _, t := range e.Variables() {
		if t.RootName() == "result" {
			return true
		}
	}
	return false
}

// resultField reads result.<name> for a decision, where name is a numeric field of
// ledger.ResultFields (a decision ranks and limits figures, not names).
func resultField(e hcl.Expression, what string) (string, hcl.Diagnostics) {
	st, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || st.Traversal.RootName() != "result" || len(st.Traversal) != 2 {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid " + what,
			Detail:  fmt.Sprintf("A decision's %s names one figure as result.<name>: %s.", what, decisionGrammar),
			Subject: e.Range().Ptr()}}
	}
	attr, ok := st.Traversal[1].(hcl.TraverseAttr)
	if !ok {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid " + what,
			Detail: "Write result.<name>, not an index.", Subject: e.Range().Ptr()}}
	}
	var numbers []string
	for _, f := range ledger.ResultFields {
		if f.Type != cty.Number {
			continue
		}
		numbers = append(numbers, f.Name)
		if f.Name == attr.Name {
			return f.Name, nil
		}
	}
	detail := fmt.Sprintf("result.%s is not a figure a decision can rank or limit.%s", attr.Name, suggest.DidYouMean(attr.Name, numbers))
	for _, f := range ledger.ResultFields {
		if f.Name == attr.Name {
			detail = fmt.Sprintf("result.%s is text (%s); a decision ranks and limits figures.", attr.Name, f.Doc)
		}
	}
	if !strings.Contains(detail, "Did you mean") && !strings.Contains(detail, "is text") {
		detail += " The figures are listed in docs/plan.md (result.*)."
	}
	return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown figure", Detail: detail, Subject: st.Traversal[1].SourceRange().Ptr()}}
}

// stringList reads a list (or tuple) of strings.
func stringList(v cty.Value) ([]string, error) {
	if v.IsNull() || !v.IsKnown() || !(v.Type().IsListType() || v.Type().IsTupleType()) {
		return nil, fmt.Errorf("want a list of strings")
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.IsKnown() || e.Type() != cty.String {
			return nil, fmt.Errorf("want a list of strings")
		}
		out = append(out, e.AsString())
	}
	return out, nil
}

// checkCells reports each of the decision's globs that matches none of cells: such a
// decision would choose among nothing.
func (d *Decision) checkCells(cells []*Cell, failed []string) hcl.Diagnostics {
	return unmatchedGlobs(d.Cells, d.cellsExpr, cells, failed, fmt.Sprintf("decision %q", d.Name), "choose among nothing")
}

package plan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// report is the diagnostics a decode or check step builds: the only state a free
// check function (checkAgents(w) hcl.Diagnostics, in Terraform's shape) shares with
// the rest of a load, and what the loader keeps its own in.
type report struct{ diags hcl.Diagnostics }

func (r *report) add(diags hcl.Diagnostics) { r.diags = append(r.diags, diags...) }

func (r *report) errorf(subject *hcl.Range, summary, format string, args ...any) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject,
	})
}

// errorIn is errorf for a problem with an evaluated expression: the diagnostic keeps
// the expression and its context, so it shows the values it was made from.
func (r *report) errorIn(expr hcl.Expression, ctx *hcl.EvalContext, subject *hcl.Range, summary, format string, args ...any) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...),
		Subject: subject, Expression: expr, EvalContext: ctx,
	})
}

// errorAbsent is errorf for a check whose premise is that the body lacks name.
func (r *report) errorAbsent(name string, subject *hcl.Range, summary, format string, args ...any) {
	r.errorf(subject, summary, format, args...)
	premise(r.last(), hcl.Range{}, name)
}

// last is the diagnostic added last.
func (r *report) last() *hcl.Diagnostic { return r.diags[len(r.diags)-1] }

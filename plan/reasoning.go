package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
	"github.com/zclconf/go-cty/cty"
)

// ReasoningEfforts are the values reasoning_effort takes (OpenAI's, which Ollama's think
// also accepts as a level).
var ReasoningEfforts = []string{"minimal", "low", "medium", "high"}

// Reasoning is a workload's reasoning controls, sent where the backend kind takes them
// (backends.Kind.Reasoning).
type Reasoning struct {
	// Effort is reasoning_effort ("" leaves the server's default).
	Effort string
	// Think is Ollama's think switch (nil leaves the server's default).
	Think *bool
	// ranges are where each control was set, for diagnostics.
	ranges map[string]hcl.Range
}

// Controls are the names of the controls set, in a fixed order.
func (r Reasoning) Controls() []string {
	var out []string
	if r.Effort != "" {
		out = append(out, "reasoning_effort")
	}
	if r.Think != nil {
		out = append(out, "think")
	}
	return out
}

// decodeReasoning reads reasoning_effort and think.
func (l *loader) decodeReasoning(w *Workload, a hcl.Attributes, ctx *hcl.EvalContext) {
	w.Reasoning.ranges = map[string]hcl.Range{}
	if at := a["reasoning_effort"]; at != nil && l.decode(at, ctx, &w.Reasoning.Effort) {
		w.Reasoning.ranges["reasoning_effort"] = at.NameRange
		if !contains(ReasoningEfforts, w.Reasoning.Effort) {
			l.errorf(at.Expr.Range().Ptr(), "Invalid reasoning_effort", "reasoning_effort is %s, not %q.%s",
				quoteList(ReasoningEfforts), w.Reasoning.Effort, suggestion(w.Reasoning.Effort, ReasoningEfforts))
		}
	}
	if at := a["think"]; at != nil {
		var b bool
		if v, ok := l.eval(at.Expr, ctx, scopePlan); ok && v.Type() == cty.String && contains(ReasoningEfforts, strings.ToLower(v.AsString())) {
			l.thinkLevel(at, strings.ToLower(v.AsString()))
		} else if l.decode(at, ctx, &b) {
			w.Reasoning.Think = &b
			w.Reasoning.ranges["think"] = at.NameRange
		}
	}
}

// checkReasoningBackends warns of a workload's reasoning control on a cell whose backend
// kind does not send it: the server never sees it, and the row says so (IgnoredControls).
func checkReasoningBackends(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	warned := map[string]bool{}
	for _, c := range cells {
		if c.Backend == nil {
			continue
		}
		for _, name := range c.IgnoredReasoning() {
			key := c.Workload.Name + "\x00" + c.Backend.Addr + "\x00" + name
			if warned[key] {
				continue
			}
			warned[key] = true
			rng := c.Workload.Reasoning.ranges[name]
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning, Summary: "Reasoning control not sent",
				Detail: fmt.Sprintf("Workload %q sets %s, which a %s backend does not send (it takes %s), so backend %s ignores it; its rows say so in their notes.",
					c.Workload.Name, name, c.Backend.Kind, takes(c.Backend.Kind), c.Backend.Addr),
				Subject: rng.Ptr(),
			})
		}
	}
	return diags
}

// IgnoredReasoning lists the workload's reasoning controls the cell's backend kind does
// not send.
func (c *Cell) IgnoredReasoning() []string {
	if c.Backend == nil {
		return nil
	}
	k, _ := backends.LookupKind(c.Backend.Kind)
	var out []string
	for _, name := range c.Workload.Reasoning.Controls() {
		if !slices.Contains(k.Reasoning, name) {
			out = append(out, name)
		}
	}
	return out
}

func takes(kind string) string {
	k, _ := backends.LookupKind(kind)
	if len(k.Reasoning) == 0 {
		return "no reasoning control"
	}
	return strings.Join(k.Reasoning, " and ")
}

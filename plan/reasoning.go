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
		if !slices.Contains(ReasoningEfforts, w.Reasoning.Effort) {
			l.errorf(at.Expr.Range().Ptr(), "Invalid reasoning_effort", "reasoning_effort is %s, not %q.%s",
				quoteList(ReasoningEfforts), w.Reasoning.Effort, suggestion(w.Reasoning.Effort, ReasoningEfforts))
		}
	}
	if at := a["think"]; at != nil {
		var b bool
		if v, ok := l.eval(at.Expr, ctx, scopePlan); ok && v.Type() == cty.String && slices.Contains(ReasoningEfforts, strings.ToLower(v.AsString())) {
			l.add(thinkLevel(at, strings.ToLower(v.AsString())))
		} else if l.decode(at, ctx, &b) {
			w.Reasoning.Think = &b
			w.Reasoning.ranges["think"] = at.NameRange
		}
	}
}

// checkReasoningBackends warns of a workload's reasoning control on a cell whose backend
// kind does not send it: the server never sees it, and the row says so (IgnoredControls).
func checkReasoningBackends(cells []*Cell) hcl.Diagnostics {
	// One warning per workload and control, naming every backend that ignores it.
	type ignored struct {
		w     *Workload
		name  string
		addrs []string
		kinds []string
	}
	var order []*ignored
	byKey := map[string]*ignored{}
	for _, c := range cells {
		if c.Backend == nil {
			continue
		}
		for _, name := range c.IgnoredReasoning() {
			key := c.Workload.Name + "\x00" + name
			ig := byKey[key]
			if ig == nil {
				ig = &ignored{w: c.Workload, name: name}
				byKey[key] = ig
				order = append(order, ig)
			}
			if !slices.Contains(ig.addrs, c.Backend.Addr) {
				ig.addrs = append(ig.addrs, c.Backend.Addr)
			}
			if !slices.Contains(ig.kinds, c.Backend.Kind) {
				ig.kinds = append(ig.kinds, c.Backend.Kind)
			}
		}
	}
	var diags hcl.Diagnostics
	for _, ig := range order {
		var kinds []string
		for _, k := range ig.kinds {
			kinds = append(kinds, fmt.Sprintf("%s backend (it takes %s)", article(k), takes(k)))
		}
		who := "backend " + ig.addrs[0] + " ignores it"
		if len(ig.addrs) > 1 {
			who = "backends " + strings.Join(ig.addrs[:len(ig.addrs)-1], ", ") + " and " + ig.addrs[len(ig.addrs)-1] + " ignore it"
		}
		rng := ig.w.Reasoning.ranges[ig.name]
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning, Summary: "Reasoning control not sent",
			Detail: fmt.Sprintf("Workload %q sets %s, which %s does not send, so %s; their rows say so in their notes.",
				ig.w.Name, ig.name, strings.Join(kinds, " or "), who),
			Subject: rng.Ptr(),
		})
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

package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/planrun/planrun/load/dataset"
)

// need is what a workload must do for a figure to exist in its rows.
type need int

const (
	needGeneration need = iota // it generates tokens: not an embeddings workload
	needStream                 // streamed generation: a first token to time
	needGaps                   // streamed, more than one output token: a gap to time
	needPaced                  // requests sent on a schedule: request_rate or a replay
	needSession                // multi-turn conversations: a session block
	needSLO                    // per-request limits: an slo block
	needEmbeddings             // embeddings requests: an embeddings block
)

// figureNeeds is the one table of which figures each kind of workload produces: the
// result.* names (by prefix; the first match wins) and what a workload needs to have
// them. A name not listed (e2e_*, error_rate, vram_*, …) every workload has. The slo
// limits, goals, expect conditions and capacity searches are all checked against it, so
// none of them can ask for a figure its workload never measures.
var figureNeeds = []struct {
	prefix string
	needs  []need
}{
	{"ttft_", []need{needStream}},
	{"ttfo_", []need{needStream}},
	{"reasoning_span_", []need{needStream}},
	{"tpot_", []need{needGaps}}, // tpot_answer_* too
	{"itl_", []need{needGaps}},
	{"decode_tok_s", []need{needStream}},
	{"output_tok_s", []need{needGeneration}},
	{"reasoning_tokens", []need{needGeneration}},
	{"answer_tokens", []need{needGeneration}},
	{"goodput_tok_s", []need{needGeneration, needSLO}},
	{"goodput_requests_s", []need{needSLO}},
	{"slo_attainment_pct", []need{needSLO}},
	{"send_lag_", []need{needPaced}},
	{"rate_scheduled_per_s", []need{needPaced}},
	{"rate_delivered_per_s", []need{needPaced}},
	{"session_duration_", []need{needSession}},
	{"turns_not_sent", []need{needSession}},
	{"inputs_s", []need{needEmbeddings}},
	{"input_tok_s", []need{needEmbeddings}},
	{"input_tokens", []need{needEmbeddings}},
}

// figureOf lists what a workload needs to have the figure (a result.* name, or an slo
// limit's figure: "ttft", "tpot", "itl", "e2e").
func figureOf(name string) []need {
	for _, f := range figureNeeds {
		if strings.HasPrefix(name+"_", f.prefix) || strings.HasPrefix(name, f.prefix) {
			return f.needs
		}
	}
	return nil
}

// lacks says why the workload can never have the figure, or "" when it can. The reason
// names the attribute or block that rules it out, with its place in the plan; missing
// are the arguments or blocks whose absence is the reason (a misspelling of one of them
// is then the real mistake, see dropCascades).
func (w *Workload) lacks(figure string) (why string, missing []string) {
	for _, n := range figureOf(figure) {
		if why, missing := w.lacksNeed(n); why != "" {
			return why, missing
		}
	}
	return "", nil
}

// has reports whether the workload can have the figure.
func (w *Workload) has(figure string) bool {
	why, _ := w.lacks(figure)
	return why == ""
}

func (w *Workload) lacksNeed(n need) (string, []string) {
	if n == needStream || n == needGaps || n == needGeneration {
		if e := w.Embeddings; e != nil {
			return fmt.Sprintf("it has an embeddings block (%s), which generates no tokens", at(e.DeclRange)), nil
		}
	}
	switch n {
	case needStream, needGaps:
		if !w.Stream {
			return fmt.Sprintf("it sets stream = false (%s): a non-streamed answer arrives whole, with no first token or gap to time", at(w.streamAt)), nil
		}
		if n == needGaps && w.OutputLength.Kind == dataset.LengthFixed && w.OutputLength.Value == 1 {
			return fmt.Sprintf("it sets max_tokens = 1 (%s): one output token leaves no gap to time", at(w.maxTokensAt)), nil
		}
	case needPaced:
		if len(w.RequestRates) == 0 && w.Replay == nil {
			return "it is a closed loop (no request_rate, no replay): no request is sent on a schedule", []string{"request_rate", "replay"}
		}
	case needSession:
		if w.Session == nil {
			return "it has no session block", []string{"session"}
		}
	case needSLO:
		if w.SLO.IsZero() {
			return "it has no slo block", []string{"slo"}
		}
	case needEmbeddings:
		if w.Embeddings == nil {
			return "it has no embeddings block", []string{"embeddings"}
		}
	}
	return "", nil
}

// at is " at file:line" for a range, or "" for none.
func at(r hcl.Range) string {
	if r.Filename == "" {
		return "in its block"
	}
	return fmt.Sprintf("at %s:%d", r.Filename, r.Start.Line)
}

// resultRefs lists the result.<name> references of a condition, with their ranges.
func resultRefs(expr hcl.Expression) []resultRef {
	var out []resultRef
	for _, t := range expr.Variables() {
		if t.RootName() != "result" {
			continue
		}
		if name := attrStep(t, 1); name != "" {
			out = append(out, resultRef{name, hcl.RangeBetween(t[0].SourceRange(), t[1].SourceRange())})
		}
	}
	return out
}

// nullGuarded reports whether a condition handles result.<name> being null itself: the
// reference is an argument of coalesce, try or can, or compared with null (== or !=). Such
// a condition holds on the rows that lack the figure, as its author meant.
func nullGuarded(expr hcl.Expression, name string) bool {
	syn, ok := expr.(hclsyntax.Expression)
	if !ok {
		return false
	}
	refers := func(e hclsyntax.Expression) bool {
		return slices.ContainsFunc(resultRefs(e), func(r resultRef) bool { return r.name == name })
	}
	isNull := func(e hclsyntax.Expression) bool {
		v, ok := e.(*hclsyntax.LiteralValueExpr)
		return ok && v.Val.IsNull()
	}
	guarded := false
	hclsyntax.VisitAll(syn, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.FunctionCallExpr:
			if n.Name == "coalesce" || n.Name == "try" || n.Name == "can" {
				guarded = guarded || slices.ContainsFunc(n.Args, refers)
			}
		case *hclsyntax.BinaryOpExpr:
			if n.Op == hclsyntax.OpEqual || n.Op == hclsyntax.OpNotEqual {
				guarded = guarded || refers(n.LHS) && isNull(n.RHS) || refers(n.RHS) && isNull(n.LHS)
			}
		}
		return nil
	})
	return guarded
}

type resultRef struct {
	name string
	rng  hcl.Range
}

// checkGoalFigures refuses a goal over a figure the workload never has: the sweep would
// stop at its first level with nothing measured.
func checkGoalFigures(w *Workload) hcl.Diagnostics {
	var rep report
	if w.Goal == nil {
		return rep.diags
	}
	for _, r := range resultRefs(w.Goal) {
		if why, missing := w.lacks(r.name); why != "" {
			rep.errorf(r.rng.Ptr(), "Unmeasurable goal", "The goal reads result.%s, which workload %q never has: %s. Every level would miss it.", r.name, w.Name, why)
			premise(rep.last(), hcl.Range{}, missing...)
		}
	}
	return rep.diags
}

// checkExpectFigures refuses an expect condition over a figure that a workload of a
// cell it applies to never has: it would fail on each of that workload's rows. Every
// such workload is named in one error per reference.
func (e *Expect) checkFigures(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, r := range resultRefs(e.Condition) {
		var whys []string
		var premises []absentGroup
		seen := map[*Workload]bool{}
		for _, c := range cells {
			if seen[c.Workload] || !e.Applies(c.ID) {
				continue
			}
			seen[c.Workload] = true
			if why, missing := c.Workload.lacks(r.name); why != "" {
				whys = append(whys, fmt.Sprintf("workload %q never has it: %s", c.Workload.Name, why))
				premises = append(premises, absentGroup{missing, c.Workload.body})
			}
		}
		if len(whys) == 0 || nullGuarded(e.Condition, r.name) {
			continue
		}
		d := &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Unmeasurable condition",
			Detail: fmt.Sprintf("expect %q reads result.%s; %s. The condition would fail on each of those rows. Limit the expect to the cells that measure it with cells = [\"<glob>\", …].",
				e.Name, r.name, strings.Join(whys, "; ")),
			Subject: r.rng.Ptr(),
		}
		for _, g := range premises {
			if len(g.names) == 0 {
				premises = nil // one workload lacks it for a reason no misspelling explains
				break
			}
		}
		for _, g := range premises {
			premise(d, g.body, g.names...)
		}
		diags = append(diags, d)
	}
	return diags
}

// sloFigures are the slo limits and the figures they limit.
var sloFigures = map[string]string{"ttft_s": "ttft", "tpot_ms": "tpot", "itl_ms": "itl", "e2e_s": "e2e"}

// checkSLOFigures refuses an slo limit on a figure the workload never has: it could
// never be met or missed.
func checkSLOFigures(w *Workload) hcl.Diagnostics {
	var rep report
	for _, name := range []string{"ttft_s", "tpot_ms", "itl_ms", "e2e_s"} {
		r, ok := w.sloAt[name]
		if !ok {
			continue
		}
		if why, _ := w.lacks(sloFigures[name]); why != "" {
			rep.errorf(r.Ptr(), "Unmeasurable SLO", "The slo limits %s, which workload %q never has: %s. The limit could never be met or missed.", name, w.Name, why)
		}
	}
	return rep.diags
}

package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/ledger"
	"github.com/zclconf/go-cty/cty"
)

// Reference is a `reference "<name>"` block: a published range ("reasonable range" in
// the seed's results template) that matching results are held against.
type Reference struct {
	Name string
	// Match selects cells; keys are model, quantization, tool, hardware, workload.
	Match map[string]string
	// Ranges are [low, high] by metric: ttft_s, tpot_ms, output_tok_s, vram_gb.
	Ranges map[string][2]float64
	// Source says where the range was published.
	Source    string
	DeclRange hcl.Range
}

// ReferenceMetrics are the metrics a reference can give a range for.
// They are the names of ledger.ReferenceMetrics, which apply reads the figures with.
var ReferenceMetrics = namesOf(ledger.ReferenceMetrics, func(m ledger.ReferenceMetric) string { return m.Name })

var referenceSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "match", Required: true}, {Name: "source"}}}
	for _, m := range ReferenceMetrics {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: m})
	}
	return s
}()

// checkCells warns when the reference matches none of cells: it would hold no row
// against its ranges, silently (a misspelt name, or a GPU written differently).
func (r *Reference) checkCells(cells []*Cell) hcl.Diagnostics {
	for _, c := range cells {
		if r.Matches(c) {
			return nil
		}
	}
	var keys []string
	for k, v := range r.Match {
		keys = append(keys, fmt.Sprintf("%s = %q", k, v))
	}
	sort.Strings(keys)
	return hcl.Diagnostics{{
		Severity: hcl.DiagWarning, Summary: "Reference matches no cell",
		Detail: fmt.Sprintf("Reference %q (match { %s }) matches no cell of this plan, so no row will be held against "+
			"its ranges; compare the names with 'planrun plan'.", r.Name, strings.Join(keys, ", ")),
		Subject: r.DeclRange.Ptr(),
	}}
}

// Matches reports whether every match key agrees with the cell. Names compare without
// regard to case, since published tables write "Q4_K_M" where plans write "q4_K_M";
// tool matches the backend's address, kind or name, hardware its name or GPU.
func (r *Reference) Matches(c *Cell) bool {
	for k, want := range r.Match {
		var got []string
		switch k {
		case "model":
			got = []string{c.Model, c.ModelID}
		case "quantization":
			got = []string{c.Quantization}
		case "tool":
			if c.Backend != nil {
				got = []string{c.Backend.Addr, c.Backend.Kind, c.Backend.Name}
			}
		case "hardware":
			if c.Hardware != nil {
				got = []string{c.Hardware.Name, c.Hardware.GPU}
			}
		case "workload":
			if c.Workload != nil {
				got = []string{c.Workload.Name}
			}
		}
		ok := false
		for _, g := range got {
			if g != "" && strings.EqualFold(g, want) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (l *loader) decodeReferenceBlock(b *hcl.Block, ctx *hcl.EvalContext) *Reference {
	name := b.Labels[0]
	for _, prev := range l.p.References {
		if prev.Name == name {
			return nil
		}
	}
	r := &Reference{Name: name, Match: map[string]string{}, Ranges: map[string][2]float64{}, DeclRange: b.DefRange}
	content, diags := b.Body.Content(referenceSchema)
	l.add(diags)
	before := len(l.diags)
	a := content.Attributes
	if m := a["match"]; m != nil {
		if v, ok := l.eval(m.Expr, ctx, scopePlan); ok {
			if !v.Type().IsObjectType() && !v.Type().IsMapType() {
				l.errorf(m.Expr.Range().Ptr(), "Invalid match", "match is an object such as { hardware = \"rtx4060\", model = \"qwen2.5-7b\" }.")
			} else {
				for k, ev := range v.AsValueMap() {
					if !slices.Contains(matrixDimensions, k) {
						l.errorf(keyRange(m.Expr, k), "Invalid match key", "match keys are %s, not %q.%s", quoteList(matrixDimensions), k, suggestion(k, matrixDimensions))
						continue
					}
					// A block reference matches by its name, as does a string.
					prefix := map[string]string{"tool": "backend.", "hardware": "hardware.", "workload": "workload."}[k]
					s, ok := refName(ev, prefix)
					if !ok || prefix == "" && ev.Type() != cty.String {
						l.errorIn(m.Expr, ctx, keyRange(m.Expr, k), "Invalid match value", "match.%s is a string or a block reference.", k)
						continue
					}
					r.Match[k] = s
				}
			}
		}
	}
	given := 0 // ranges written, decoded or not: one unknown through an earlier error still counts
	for _, metric := range ReferenceMetrics {
		at := a[metric]
		if isNull(at, ctx) {
			continue
		}
		given++
		var rng []float64
		if l.decode(at, ctx, &rng) {
			if len(rng) != 2 || rng[0] > rng[1] {
				l.errorf(at.Expr.Range().Ptr(), "Invalid range", "%s is [low, high] with low ≤ high.", metric)
				continue
			}
			r.Ranges[metric] = [2]float64{rng[0], rng[1]}
		}
	}
	if given == 0 && !hasErrorsSince(l.diags, before) {
		l.errorf(b.DefRange.Ptr(), "Reference without ranges", "A reference gives at least one of %s.", quoteList(ReferenceMetrics))
	}
	l.decode(a["source"], ctx, &r.Source)
	if hasErrorsSince(l.diags, before) {
		return nil
	}
	return r
}

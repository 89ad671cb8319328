package plan

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// ModelWeight is one model name of a workload's mix and its weight.
type ModelWeight struct {
	Name   string
	Weight float64
	// Range is where the plan names it (its item of the models object, or the whole
	// attribute when the name is computed), for errors found at run time.
	Range hcl.Range
}

// decodeModelMix reads models = { "<name>" = <weight>, ... }: the requests are spread
// over the names by weight (a gateway's traffic behind one key, or vLLM's LoRA adapters),
// in name order so the seeded draw is the same on every load of the plan.
func (l *loader) decodeModelMix(w *Workload, a *hcl.Attribute, ctx *hcl.EvalContext) {
	if a == nil {
		return
	}
	var m map[string]float64
	if !l.decode(a, ctx, &m) {
		return
	}
	total := 0.0
	for name, wt := range m {
		if strings.TrimSpace(name) == "" {
			l.errorf(keyRange(a.Expr, name), "Invalid models", "A model name of the mix is empty: each key is the name the server knows a model or adapter by.")
			return
		}
		if wt < 0 {
			l.errorf(a.Expr.Range().Ptr(), "Invalid models", "The weight of %q is %g: weights are shares of the requests, 0 or more.", name, wt)
			return
		}
		total += wt
		w.Models = append(w.Models, ModelWeight{Name: name, Weight: wt, Range: *keyRange(a.Expr, name)})
	}
	if total <= 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid models", "The weights sum to %g: give at least one model a positive weight (each model's share of the requests is its weight / the sum).", total)
		w.Models = nil
		return
	}
	sort.Slice(w.Models, func(i, j int) bool { return w.Models[i].Name < w.Models[j].Name })
}

package plan

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Capacity is a workload's `capacity` block: search for the highest load level whose
// SLO attainment stays at or above a target. Apply runs the declared levels in order
// until one misses the target, then bisects between the last level that met it and
// the first that missed it, until they are Resolution apart. The load searched is the
// request rate when the workload has request_rate (at its one concurrency level), else
// the concurrency.
type Capacity struct {
	// TargetPct is the attainment a level must reach, in % of requests.
	TargetPct float64
	// Resolution is how close the bisection gets: in requests for concurrency (a whole
	// number), in requests/s for a rate. Default 1.
	Resolution float64
	DeclRange  hcl.Range
}

// SearchesRate reports whether a capacity search of the workload varies the request
// rate (it has request_rate); else it varies the concurrency.
func (w *Workload) SearchesRate() bool { return len(w.RequestRates) > 0 }

// CapacityDimension names what the workload's capacity search varies: "request_rate"
// or "concurrency".
func (w *Workload) CapacityDimension() string {
	if w.SearchesRate() {
		return "request_rate"
	}
	return "concurrency"
}

// Between returns the level to measure next in a capacity search, given the highest
// level known to meet the target (met) and the lowest known to miss it (missed): their
// midpoint, or false once they are within the resolution (met is then the capacity).
func (c *Capacity) Between(met, missed LoadLevel, byRate bool) (LoadLevel, bool) {
	if byRate {
		if missed.RequestRate-met.RequestRate <= c.Resolution {
			return LoadLevel{}, false
		}
		return LoadLevel{Concurrency: met.Concurrency, RequestRate: (met.RequestRate + missed.RequestRate) / 2}, true
	}
	step := int(c.Resolution)
	if missed.Concurrency-met.Concurrency <= step {
		return LoadLevel{}, false
	}
	return LoadLevel{Concurrency: (met.Concurrency + missed.Concurrency) / 2}, true
}

var sloSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "ttft_s"}, {Name: "tpot_ms"}, {Name: "itl_ms"}, {Name: "e2e_s"}},
}

// sloLimits are the names of the slo block's limits.
var sloLimits = namesOf(sloSchema.Attributes, func(a hcl.AttributeSchema) string { return a.Name })

var capacitySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "target_attainment_pct", Required: true}, {Name: "resolution"}},
}

// decodeSLOBlocks decodes the workload's slo and capacity blocks (at most one of each)
// and checks them against the rest of the workload.
func (l *loader) decodeSLOBlocks(w *Workload, blocks hcl.Blocks, ctx *hcl.EvalContext) {
	seen := map[string]*hcl.Block{}
	for _, b := range blocks {
		if prev := seen[b.Type]; prev != nil {
			l.errorf(b.DefRange.Ptr(), "Duplicate "+b.Type+" block", "A workload has one %s block; the first is at %s.", b.Type, prev.DefRange)
			continue
		}
		seen[b.Type] = b
		switch b.Type {
		case "slo":
			l.decodeSLO(w, b, ctx)
		case "capacity":
			l.decodeCapacity(w, b, ctx)
		}
	}
	if c := seen["capacity"]; c != nil && w.Capacity != nil {
		l.add(checkCapacity(w, c))
	}
}

// decodeSLO sets w.SLO from an slo block: each limit a positive number in its unit.
func (l *loader) decodeSLO(w *Workload, b *hcl.Block, ctx *hcl.EvalContext) {
	content, diags := b.Body.Content(sloSchema)
	l.add(diags)
	limits := []struct {
		name string
		unit time.Duration
		dst  *time.Duration
	}{
		{"ttft_s", time.Second, &w.SLO.TTFT}, {"tpot_ms", time.Millisecond, &w.SLO.TPOT},
		{"itl_ms", time.Millisecond, &w.SLO.ITL}, {"e2e_s", time.Second, &w.SLO.E2E},
	}
	for _, lim := range limits {
		a := content.Attributes[lim.name]
		var f float64
		if !l.decode(a, ctx, &f) {
			continue
		}
		if f <= 0 || math.IsInf(f, 0) {
			l.errorf(a.Expr.Range().Ptr(), "Invalid SLO limit", "%s is a limit above 0, not %g.", lim.name, f)
			continue
		}
		unit := "s"
		if lim.unit == time.Millisecond {
			unit = "ms"
		}
		if msg := unitSlip(lim.name, unit, f); msg != "" {
			l.add(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Number in the wrong unit?", Detail: msg, Subject: a.Expr.Range().Ptr()}})
		}
		if w.sloAt == nil {
			w.sloAt = map[string]hcl.Range{}
		}
		w.sloAt[lim.name] = a.NameRange
		*lim.dst = time.Duration(f * float64(lim.unit))
	}
	if sb, ok := b.Body.(*hclsyntax.Body); ok {
		w.sloBody = sb.SrcRange
	}
	if len(content.Attributes) == 0 {
		l.errorf(b.DefRange.Ptr(), "Empty slo block", "An slo sets at least one limit: ttft_s, tpot_ms, itl_ms or e2e_s.")
		premise(l.diags[len(l.diags)-1], w.sloBody, slices.Concat(sloLimits, []string{anyName})...) // a misspelt limit says it
	}
}

// decodeCapacity sets w.Capacity from a capacity block.
func (l *loader) decodeCapacity(w *Workload, b *hcl.Block, ctx *hcl.EvalContext) {
	content, diags := b.Body.Content(capacitySchema)
	l.add(diags)
	c := &Capacity{Resolution: 1, DeclRange: b.DefRange}
	before := len(l.diags)
	if a := content.Attributes["target_attainment_pct"]; l.decode(a, ctx, &c.TargetPct) {
		if c.TargetPct <= 0 || c.TargetPct > 100 {
			l.errorf(a.Expr.Range().Ptr(), "Invalid target_attainment_pct", "target_attainment_pct is a percentage of requests, above 0 and at most 100, not %g.", c.TargetPct)
		} else if c.TargetPct < 1 {
			l.add(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Attainment target below 1%",
				Detail:  fmt.Sprintf("target_attainment_pct is in percent: %g asks for %g%% of requests. For 95%%, write 95.", c.TargetPct, c.TargetPct),
				Subject: a.Expr.Range().Ptr()}})
		}
	}
	if a := content.Attributes["resolution"]; l.decode(a, ctx, &c.Resolution) && c.Resolution <= 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid resolution", "resolution is how close the search gets, above 0, not %g.", c.Resolution)
	}
	if !hasErrorsSince(l.diags, before) {
		w.Capacity = c
	}
}

// checkCapacity holds the capacity search against the rest of the workload: it needs
// an slo, no goal (both would end the sweep), one concurrency when it searches rates,
// ascending levels and a whole resolution for concurrency.
func checkCapacity(w *Workload, b *hcl.Block) hcl.Diagnostics {
	var rep report
	c := w.Capacity
	r := b.DefRange.Ptr()
	switch {
	case !w.has("slo_attainment_pct"):
		rep.errorAbsent("slo", r, "Capacity search without an slo", "A capacity search measures SLO attainment: add an slo block to workload %q.", w.Name)
		if w.sloBody != (hcl.Range{}) { // an slo block whose limits are misspelt or unreadable
			d := rep.last()
			d.Extra = nil
			premise(d, w.sloBody, slices.Concat(sloLimits, []string{anyName})...)
		}
	case w.Goal != nil:
		rep.errorf(r, "Conflicting capacity and goal", "Both end the sweep at the first level that misses them; give workload %q a goal or a capacity block, not both (a goal may read result.slo_attainment_pct).", w.Name)
	case w.SearchesRate() && len(w.Concurrency) != 1:
		rep.errorf(r, "Capacity search over two loads", "With request_rate the search is over the rate at one concurrency level (the cap on requests in flight); workload %q lists %d.", w.Name, len(w.Concurrency))
	case w.SearchesRate() && !slices.IsSorted(w.RequestRates):
		rep.errorf(w.levelAt("request_rate", descending(w.RequestRates)), "Capacity search needs ascending levels", "The capacity search (at %s) bisects between the declared levels in order: list request_rate of workload %q from low to high.", b.DefRange, w.Name)
	case !w.SearchesRate() && !slices.IsSorted(w.Concurrency):
		rep.errorf(w.levelAt("concurrency", descending(w.Concurrency)), "Capacity search needs ascending levels", "The capacity search (at %s) bisects between the declared levels in order: list concurrency of workload %q from low to high.", b.DefRange, w.Name)
	case !w.SearchesRate() && c.Resolution != math.Trunc(c.Resolution):
		rep.errorf(r, "Invalid resolution", "Concurrency is searched in whole requests: resolution must be a whole number, not %g.", c.Resolution)
	default:
		return rep.diags
	}
	w.Capacity = nil
	return rep.diags
}

// descending is the index of the first level lower than the one before it.
func descending[T int | float64](xs []T) int {
	for i := 1; i < len(xs); i++ {
		if xs[i] < xs[i-1] {
			return i
		}
	}
	return 0
}

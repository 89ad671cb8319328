package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/internal/suggest"
)

// Precision is a workload's `precision { ttft_p50 = "2%"  max_requests = 5000 }` block:
// each measured run of a level keeps sending, past the workload's requests, until every
// named figure's confidence interval is within its relative half-width (±2%), or a cap
// is hit (max_requests, max_duration), and the row says which.
type Precision struct {
	Targets []PrecisionTarget
	// MaxRequests caps a run's requests (0: only MaxDuration caps it); MaxDuration caps
	// its time (0: only MaxRequests does).
	MaxRequests int
	MaxDuration time.Duration
	DeclRange   hcl.Range
	targetsAt   []hcl.Range // where each target is written
}

// PrecisionTarget is one figure and the relative half-width its interval must reach.
type PrecisionTarget struct {
	Figure     string  // as written: ttft_p50
	Dist       string  // ttft, tpot, itl or e2e
	Percentile int     // 50, 90, 95 or 99; 0 for the mean
	HalfWidth  float64 // a fraction: 0.02 is ±2%
}

// PrecisionFigures are the figures a precision block may name.
var PrecisionFigures = func() []string {
	var out []string
	for _, d := range []string{"ttft", "tpot", "itl", "e2e"} {
		for _, s := range []string{"p50", "p90", "p95", "p99", "mean"} {
			out = append(out, d+"_"+s)
		}
	}
	return out
}()

// precisionFiguresText says which figures a precision block takes, without listing all 20.
const precisionFiguresText = "Figures: ttft, tpot, itl or e2e, then _p50, _p90, _p95, _p99 or _mean (ttft_p99)"

// unboundedPrecisionRequests is a run's request count when only max_duration caps it:
// the clock ends the run long before.
const unboundedPrecisionRequests = 10_000_000

// RunRequests is the most requests a run with this block sends.
func (p *Precision) RunRequests() int {
	if p.MaxRequests > 0 {
		return p.MaxRequests
	}
	return unboundedPrecisionRequests
}

// decodePrecisionBlocks reads a workload's precision block.
func (l *loader) decodePrecisionBlocks(w *Workload, blocks hcl.Blocks, ctx *hcl.EvalContext) {
	for i, b := range blocks {
		if i > 0 {
			l.errorf(b.DefRange.Ptr(), "Duplicate precision block", "A workload has one precision block; the first is at %s.", blocks[0].DefRange)
			continue
		}
		n0 := len(l.diags)
		attrs, diags := b.Body.JustAttributes()
		l.add(diags)
		p := &Precision{DeclRange: b.DefRange}
		names := make([]string, 0, len(attrs))
		for name := range attrs {
			names = append(names, name)
		}
		slices.SortFunc(names, func(x, y string) int { return attrs[x].NameRange.Start.Byte - attrs[y].NameRange.Start.Byte })
		for _, name := range names {
			a := attrs[name]
			switch name {
			case "max_requests":
				if l.decode(a, ctx, &p.MaxRequests) && p.MaxRequests < 1 {
					l.errorf(a.Expr.Range().Ptr(), "Invalid max_requests", "max_requests caps a run's requests: at least 1, not %d.", p.MaxRequests)
				}
			case "max_duration":
				if l.duration(a, ctx, &p.MaxDuration) && p.MaxDuration <= 0 {
					l.errorf(a.Expr.Range().Ptr(), "Invalid max_duration", "max_duration caps a run's time: above 0.")
				}
			default:
				l.decodePrecisionTarget(p, a, ctx)
			}
		}
		switch {
		case hasErrorsSince(l.diags, n0):
		case len(p.Targets) == 0:
			l.errorf(b.DefRange.Ptr(), "Empty precision block", "Name a figure and the half-width its interval must reach, e.g. ttft_p50 = \"2%%\". %s.", precisionFiguresText)
		case p.MaxRequests == 0 && p.MaxDuration == 0:
			l.errorf(b.DefRange.Ptr(), "Precision without a cap", "A precision block needs max_requests or max_duration (or both): a figure may never get that precise, and the run must end.")
		case w.Replay != nil:
			l.errorf(b.DefRange.Ptr(), "Conflicting blocks", "A replay sends its trace's rows at the trace's times: it cannot keep sending until a figure is precise. Drop the precision block, or replay more of the trace.")
		case w.Session != nil:
			l.errorf(b.DefRange.Ptr(), "Conflicting blocks", "A session workload's requests are whole sessions: a precision block cannot stop one part-way.")
		case p.MaxRequests > 0 && w.Requests > p.MaxRequests:
			l.errorf(b.DefRange.Ptr(), "max_requests below requests", "requests = %d is the first batch a run sends before it judges precision; max_requests = %d must be at least that.", w.Requests, p.MaxRequests)
		}
		if !hasErrorsSince(l.diags, n0) {
			l.add(unmeasurableTargets(w, p))
		}
		w.Precision = p
	}
}

// unmeasurableTargets refuses a target on a figure the workload never has (TTFT with
// stream = false, any token figure of an embeddings workload): no run could reach its
// precision, so every run would send until its cap.
func unmeasurableTargets(w *Workload, p *Precision) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for i, t := range p.Targets {
		if why, _ := w.lacks(t.Figure); why != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Unmeasurable precision",
				Detail: fmt.Sprintf("The precision block holds %s to a half-width, but workload %q never has it: %s. Every run would send until its cap (max_requests, max_duration) for nothing; hold an e2e figure instead.",
					t.Figure, w.Name, why),
				Subject: p.targetsAt[i].Ptr(),
			})
		}
	}
	return diags
}

// decodePrecisionTarget reads one figure = "2%" of a precision block.
func (l *loader) decodePrecisionTarget(p *Precision, a *hcl.Attribute, ctx *hcl.EvalContext) {
	if !slices.Contains(PrecisionFigures, a.Name) {
		l.errorf(a.NameRange.Ptr(), "Unknown precision figure", "%q is no figure a precision block can hold to a half-width.%s %s; caps: max_requests, max_duration.",
			a.Name, suggest.DidYouMean(a.Name, append(slices.Clone(PrecisionFigures), "max_requests", "max_duration")), precisionFiguresText)
		return
	}
	var s string
	if !l.decode(a, ctx, &s) {
		return
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(s), "%") || math.IsNaN(v) || v <= 0 || v >= 100 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid precision", "%s is the half-width its interval must reach, relative to the figure: a percentage above 0 and below 100 such as \"2%%\", not %q.", a.Name, s)
		return
	}
	dist, stat, _ := strings.Cut(a.Name, "_")
	t := PrecisionTarget{Figure: a.Name, Dist: dist, HalfWidth: v / 100}
	if stat != "mean" {
		t.Percentile, _ = strconv.Atoi(strings.TrimPrefix(stat, "p"))
	}
	p.Targets = append(p.Targets, t)
	p.targetsAt = append(p.targetsAt, a.NameRange)
}

// String is the block as a row's notes cite it: "ttft_p50 ±2%, tpot_p50 ±1%".
func (p *Precision) String() string {
	parts := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		parts[i] = fmt.Sprintf("%s ±%g%%", t.Figure, 100*t.HalfWidth)
	}
	return strings.Join(parts, ", ")
}

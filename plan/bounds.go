package plan

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/stats"
)

// boundedPercentiles are the percentiles whose needs the warning names: the tables'
// median and the tails the CSV and gates read.
var boundedPercentiles = []int{50, 90, 99}

// checkBounds warns about a workload's levels that measure too few requests for their
// median to be bounded at the workload's confidence: every percentile of such a level is
// reported without an interval (†), and a first plan (concurrency = [1, 2], repeat_runs = 3)
// found that only in its report. The counts are stats.RequestsToBound, the rule the
// intervals themselves follow. A precision block keeps sending until its figures are
// bounded, and a replay sends its trace's rows, so neither is judged here.
func checkBounds(w *Workload) hcl.Diagnostics {
	if w.Precision != nil || w.Replay != nil || w.RepeatRuns < 1 {
		return nil
	}
	median := stats.RequestsToBound(0.5, w.Confidence)
	var short []string
	for _, lv := range w.Levels() {
		if lv.Concurrency < 1 {
			continue
		}
		n := w.RequestsPerRun(lv.Concurrency) * w.RepeatRuns
		if n >= median {
			continue
		}
		short = append(short, fmt.Sprintf("%s: %d (%d a run × repeat_runs %d)", lv, n, w.RequestsPerRun(lv.Concurrency), w.RepeatRuns))
	}
	if len(short) == 0 {
		return nil
	}
	var needs strings.Builder
	for i, p := range boundedPercentiles {
		n := stats.RequestsToBound(float64(p)/100, w.Confidence)
		if i == 0 {
			fmt.Fprintf(&needs, "a p%d needs %d measured requests at a level", p, n)
		} else {
			fmt.Fprintf(&needs, ", a p%d %d", p, n)
		}
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagWarning, Summary: "Too few requests to bound the figures",
		Detail: fmt.Sprintf("Workload %q measures too few requests for a %g%% interval on any percentile at %s, "+
			"so each figure of those levels will be reported unbounded (†). At %g%%, %s. Raise requests (or repeat_runs), "+
			"or add a precision block, which keeps a level sending until its figures are as precise as it asks.",
			w.Name, 100*w.Confidence, strings.Join(short, "; "), 100*w.Confidence, needs.String()),
		Subject: w.DeclRange.Ptr(),
	}}
}

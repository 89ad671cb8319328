package plan

import "github.com/hashicorp/hcl/v2"

// decodeStopWhenSaturated reads stop_when_saturated: a paced level (an open loop's
// request_rate, a trace replay) stops sending once its requests test over-saturated.
// A closed loop cannot over-saturate (its queue is its concurrency), so it is refused
// there.
func (l *loader) decodeStopWhenSaturated(w *Workload, a *hcl.Attribute, ctx *hcl.EvalContext) {
	if !l.decode(a, ctx, &w.StopWhenSaturated) || !w.StopWhenSaturated {
		return
	}
	if len(w.RequestRates) == 0 && w.Replay == nil {
		l.errorf(a.NameRange.Ptr(), "Invalid stop_when_saturated",
			"stop_when_saturated stops an open loop (request_rate) or a trace replay whose queue grows without bound; this workload is a closed loop, whose queue is its concurrency.")
		w.StopWhenSaturated = false
	}
}

package apply

import (
	"github.com/planrun/planrun/apply/capacity"
	"github.com/planrun/planrun/apply/verdict"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

// ExpectFailure is an expect block whose condition was false (or could not be
// evaluated) for one row: verdict.Failure, named here for apply's callers.
type ExpectFailure = verdict.Failure

// endsSweep reports whether the levels after row's are not run: its goal was missed,
// or it fell short of the workload's capacity target.
func endsSweep(w *plan.Workload, row ledger.Row) bool {
	return row.Goal == ledger.GoalMissed || (w.Capacity != nil && !capacity.Meets(w, row))
}

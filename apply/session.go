package apply

import (
	"github.com/planrun/planrun/executor"
	"github.com/planrun/planrun/plan"
)

// sessionSpec is the executor's session settings for a workload's level; nil when the
// workload has no session block.
func sessionSpec(w *plan.Workload, level plan.LoadLevel) *executor.SessionSpec {
	s := w.Session
	if s == nil {
		return nil
	}
	return &executor.SessionSpec{Turns: s.Turns, ThinkTime: s.ThinkTime, Sessions: s.SessionsPerRun(level.Concurrency)}
}

// sessionTurns is the turns of the workload's sessions; 0 without a session block.
func sessionTurns(w *plan.Workload) int {
	if w.Session == nil {
		return 0
	}
	return w.Session.Turns
}

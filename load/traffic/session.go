package traffic

import (
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// sessionSpec is the executor's session settings for a workload's level; nil when the
// workload has no session block.
func sessionSpec(w *plan.Workload, level plan.LoadLevel) *executor.SessionSpec {
	s := w.Session
	if s == nil {
		return nil
	}
	return &executor.SessionSpec{Turns: s.Turns, ThinkTime: s.ThinkTime, Sessions: s.SessionsPerRun(level.Concurrency),
		Agent: agentSpec(w)}
}

// agentSpec is the executor's agent loop of a workload's sessions; nil without an agent
// block. Its draws follow the workload's seed.
func agentSpec(w *plan.Workload) *executor.AgentSpec {
	a := w.Session.Agent
	if a == nil {
		return nil
	}
	results := make([]executor.ToolResult, len(a.Results))
	for i, r := range a.Results {
		results[i] = executor.ToolResult{Tool: r.Tool, Content: r.Content}
	}
	return &executor.AgentSpec{MaxSteps: a.MaxSteps, ToolLatencyMs: a.ToolLatencyMs, ResultTokens: a.ResultTokens,
		Results: results, Seed: uint64(seed(w))}
}

// SessionTurns is the turns of the workload's sessions; 0 without a session block.
func SessionTurns(w *plan.Workload) int {
	if w.Session == nil {
		return 0
	}
	return w.Session.Turns
}

// sessionPrompt is the longest prompt of the workload's requests when the longest turn
// sends in tokens and gets out back: a session's last turn carries every earlier turn
// of its session too, prompt and answer.
func sessionPrompt(w *plan.Workload, in, out int) int {
	if w.Session == nil {
		return in
	}
	return w.Session.Turns*in + (w.Session.Turns-1)*out
}

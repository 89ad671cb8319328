package traffic

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
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
		Results: results, Seed: uint64(seed(w)), Tasks: agentTasks(a.Trajectories)}
}

// agentTasks are the recorded trajectories as the executor replays them; plan read each
// once already, so a file that fails now has changed since: it is left out. nil without.
func agentTasks(paths []string) []executor.AgentTask {
	var out []executor.AgentTask
	for _, p := range paths {
		tr, err := dataset.ReadTrajectory(p)
		if err != nil {
			continue
		}
		task := executor.AgentTask{Name: filepath.Base(p)}
		for _, st := range tr.Steps {
			task.Steps = append(task.Steps, executor.AgentTaskStep{Messages: traceMessages(st.Messages), ToolTime: st.ToolTime})
		}
		out = append(out, task)
	}
	return out
}

// traceMessages are recorded messages as the adapters send them.
func traceMessages(in []dataset.TraceMessage) []backends.Message {
	out := make([]backends.Message, len(in))
	for i, m := range in {
		out[i] = backends.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for j, c := range m.ToolCalls {
			tc := backends.ToolCall{Index: j, ID: c.ID, Name: c.Name, Args: c.Args}
			tc.ArgsJSON = json.Valid([]byte(c.Args)) && strings.HasPrefix(strings.TrimSpace(c.Args), "{")
			out[i].ToolCalls = append(out[i].ToolCalls, tc)
		}
	}
	// A result names its call's tool (Ollama answers by name).
	names := map[string]string{}
	for _, m := range out {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	for i := range out {
		if out[i].Role == backends.RoleTool {
			out[i].ToolName = names[out[i].ToolCallID]
		}
	}
	return out
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
// of its session too, prompt and answer; an agent loop's last step every earlier step's
// answer (its calls) and results, at the longest drawn result. (A replay's recorded
// conversations are what they are: not counted.)
func sessionPrompt(w *plan.Workload, in, out int) int {
	s := w.Session
	if s == nil {
		return in
	}
	if a := s.Agent; a != nil && len(a.Trajectories) == 0 {
		step := out + a.ResultTokens.Max
		for _, r := range a.Results {
			step = max(step, out+len(strings.Fields(r.Content))*2) // a word is rarely more than 2 tokens
		}
		return s.Turns*in + (s.Turns*a.MaxSteps-1)*step
	}
	return s.Turns*in + (s.Turns-1)*out
}

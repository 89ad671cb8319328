package runreport

import (
	"strconv"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// agentLoopNote says how the agent-loop tasks are counted (a Markdown line).
const agentLoopNote = "A task is a session turn the model works through by calling tools: each step is a request, every call is answered with a tool result and the next step sent, until an answer without a call (**answered**) or `max_steps` (**step-limited**); a failed step fails its task. Over the tasks that did not fail: steps per task; task time = first step's start to last step's end; tool time the client's wait for its tools between steps (no latency figure counts it), model time Σ the steps' E2E; tool share = Σ tool time / Σ (tool + model time); cache hit = per task, the share of its prompt tokens the server's prefix cache served by its usage (— when the server reports no cached count)."

// agentStepNote says what the per-step figures are (a Markdown line).
const agentStepNote = "Step k of the tasks: each later step carries every earlier step's calls and results, which the prefix cache may serve. TTFT over the step's successful requests; prompt and cached tokens their mean as the server's usage counted them."

// agentTaskCells is the per-task table of the rows of agent loops; no body when no row
// ran one.
func agentTaskCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Tasks", "Answered", "Step-limited", "Failed", "Steps mean / max", "Task p50 / p90 (s)",
		"Tool p50 (s)", "Model p50 (s)", "Tool share (%)", "Cache hit p50 / min (%)"}
	for _, r := range rows {
		if r.AgentTasks == 0 {
			continue
		}
		body = append(body, []string{r.CellID, concurrency(r), strconv.Itoa(r.AgentTasks), strconv.Itoa(r.AgentAnswered),
			strconv.Itoa(r.AgentStepLimited), strconv.Itoa(r.AgentFailed),
			mdtable.Num(r.AgentSteps.Mean, 1, 2) + " / " + mdtable.Num(r.AgentSteps.Max, 1, 0),
			mdtable.Num(r.AgentTaskTime.P50, 1, 3) + " / " + mdtable.Num(r.AgentTaskTime.P90, 1, 3),
			mdtable.Num(r.AgentToolTime.P50, 1, 3), mdtable.Num(r.AgentModelTime.P50, 1, 3), mdtable.Num(r.AgentToolSharePct, 1, 1),
			mdtable.Num(r.AgentCacheHit.P50, 1, 1) + " / " + mdtable.Num(r.AgentCacheHit.Min, 1, 1)})
	}
	return head, body
}

// agentStepCells is the per-step table of the rows of agent loops (their per-step
// figures, which a row read back from a CSV ledger keeps in its agent_per_step column).
func agentStepCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Step", "Requests", "OK", "TTFT p50 (s)", "Prompt tokens (mean)", "Cached tokens (mean)"}
	for _, r := range rows {
		for _, s := range r.AgentPerStep {
			body = append(body, []string{r.CellID, concurrency(r), strconv.Itoa(s.Step), strconv.Itoa(s.Requests), strconv.Itoa(s.Succeeded),
				mdtable.Num(s.TTFT.P50, 1, 3), mdtable.Num(s.PromptTokensMean, 1, 1), mdtable.Num(s.CachedTokensMean, 1, 1)})
		}
	}
	return head, body
}

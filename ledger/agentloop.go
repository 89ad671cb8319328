package ledger

import (
	"math"

	"github.com/planrun/planrun/stats"
)

// AgentLoop are a row's agent-loop figures (stats.AgentLoopSummary's): per task (a
// session turn driven by the model's tool calls), how many steps it took, how long, how
// much of that in tools against in the model, and how much of its prompts the server's
// prefix cache served. Time in tools is the client's: no latency or throughput figure
// of the server counts it (each step's TTFT and E2E are its own request's).
type AgentLoop struct {
	AgentTasks, AgentAnswered, AgentStepLimited, AgentFailed int
	// AgentSteps is requests per task; AgentTaskTime the first step's start to the last
	// step's end, AgentToolTime the time in tools between steps, AgentModelTime Σ the
	// steps' E2E, each over the tasks that did not fail.
	AgentSteps, AgentTaskTime, AgentToolTime, AgentModelTime stats.Dist
	// AgentToolSharePct is Σ time in tools over Σ (tools + model), in %.
	AgentToolSharePct float64
	// AgentCacheHit is, per task, the share of its prompt tokens the cache served, in %.
	AgentCacheHit stats.Dist
	// AgentPerStep are the figures of each step index: summary.json's, and the CSV's
	// agent_per_step column as JSON (rowlists.go).
	AgentPerStep []stats.StepSummary
}

func newAgentLoop() AgentLoop {
	d := stats.NewDist(nil)
	return AgentLoop{AgentSteps: d, AgentTaskTime: d, AgentToolTime: d, AgentModelTime: d, AgentCacheHit: d, AgentToolSharePct: math.NaN()}
}

// setAgentLoop fills the row's agent-loop figures from its pooled summary.
func (r *Row) setAgentLoop(p stats.Summary) {
	a := p.AgentLoop
	if a == nil {
		return
	}
	l := &r.AgentLoop
	l.AgentTasks, l.AgentAnswered, l.AgentStepLimited, l.AgentFailed = a.Tasks, a.Answered, a.StepLimited, a.Failed
	l.AgentSteps, l.AgentTaskTime, l.AgentToolTime, l.AgentModelTime = a.Steps, a.TaskTime, a.ToolTime, a.ModelTime
	l.AgentToolSharePct, l.AgentCacheHit, l.AgentPerStep = a.ToolSharePct, a.CacheHitPct, a.PerStep
}

// agentLoopColumns are the ledger columns of AgentLoop, after every earlier format's.
func agentLoopColumns() []column {
	return []column{
		intCol("agent_tasks", func(r *Row) *int { return &r.AgentTasks }),
		intCol("agent_answered_tasks", func(r *Row) *int { return &r.AgentAnswered }),
		intCol("agent_step_limited_tasks", func(r *Row) *int { return &r.AgentStepLimited }),
		intCol("agent_failed_tasks", func(r *Row) *int { return &r.AgentFailed }),
		floatCol("agent_mean_steps", 1, func(r *Row) *float64 { return &r.AgentSteps.Mean }),
		floatCol("agent_max_steps", 1, func(r *Row) *float64 { return &r.AgentSteps.Max }),
		floatCol("agent_task_p50_s", 1, func(r *Row) *float64 { return &r.AgentTaskTime.P50 }),
		floatCol("agent_task_p90_s", 1, func(r *Row) *float64 { return &r.AgentTaskTime.P90 }),
		floatCol("agent_tool_p50_s", 1, func(r *Row) *float64 { return &r.AgentToolTime.P50 }),
		floatCol("agent_model_p50_s", 1, func(r *Row) *float64 { return &r.AgentModelTime.P50 }),
		floatCol("agent_tool_share_pct", 1, func(r *Row) *float64 { return &r.AgentToolSharePct }),
		floatCol("agent_cache_hit_p50_pct", 1, func(r *Row) *float64 { return &r.AgentCacheHit.P50 }),
		floatCol("agent_cache_hit_min_pct", 1, func(r *Row) *float64 { return &r.AgentCacheHit.Min }),
	}
}

// AgentLoopFigures are one row's agent-loop figures in summary.json (null: not
// measured).
type AgentLoopFigures struct {
	Tasks        int          `json:"tasks"`
	Answered     int          `json:"answered"`
	StepLimited  int          `json:"step_limited"`
	Failed       int          `json:"failed"`
	StepsMean    JSONFloat    `json:"steps_mean"`
	TaskP50      JSONFloat    `json:"task_p50_s"`
	ToolP50      JSONFloat    `json:"tool_p50_s"`
	ModelP50     JSONFloat    `json:"model_p50_s"`
	ToolSharePct JSONFloat    `json:"tool_share_pct"`
	CacheHitP50  JSONFloat    `json:"cache_hit_p50_pct"`
	PerStep      []StepFigure `json:"per_step"`
}

// StepFigure is one step index's figures in summary.json.
type StepFigure struct {
	Step             int       `json:"step"`
	Requests         int       `json:"requests"`
	Succeeded        int       `json:"succeeded"`
	TTFTP50          JSONFloat `json:"ttft_p50_s"`
	PromptTokensMean JSONFloat `json:"prompt_tokens_mean"`
	CachedTokensMean JSONFloat `json:"cached_tokens_mean"`
}

// agentLoopFigures is r's agent-loop figures for summary.json; nil without agent loops.
func agentLoopFigures(r *Row) *AgentLoopFigures {
	if r.AgentTasks == 0 {
		return nil
	}
	f := &AgentLoopFigures{Tasks: r.AgentTasks, Answered: r.AgentAnswered, StepLimited: r.AgentStepLimited, Failed: r.AgentFailed,
		StepsMean: JSONFloat(r.AgentSteps.Mean), TaskP50: JSONFloat(r.AgentTaskTime.P50), ToolP50: JSONFloat(r.AgentToolTime.P50),
		ModelP50: JSONFloat(r.AgentModelTime.P50), ToolSharePct: JSONFloat(r.AgentToolSharePct), CacheHitP50: JSONFloat(r.AgentCacheHit.P50),
		PerStep: make([]StepFigure, 0, len(r.AgentPerStep))}
	for _, s := range r.AgentPerStep {
		f.PerStep = append(f.PerStep, StepFigure{Step: s.Step, Requests: s.Requests, Succeeded: s.Succeeded, TTFTP50: JSONFloat(s.TTFT.P50),
			PromptTokensMean: JSONFloat(s.PromptTokensMean), CachedTokensMean: JSONFloat(s.CachedTokensMean)})
	}
	return f
}

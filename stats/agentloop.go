package stats

import (
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// AgentLoopSummary is the figures of a level's agent loops (executor.AgentSpec): per
// task (one session turn driven by the model's tool calls) and per step index.
type AgentLoopSummary struct {
	// Tasks counts the turns run as agent loops; Answered those that ended in an answer
	// without a call, StepLimited those the step limit ended with a call unanswered,
	// Failed those a failed step ended.
	Tasks       int `json:"tasks"`
	Answered    int `json:"answered"`
	StepLimited int `json:"step_limited"`
	Failed      int `json:"failed"`
	// Steps is the requests of each task; the times below are over the tasks that did
	// not fail. TaskTime is the first step's start to the last step's end; ToolTime the
	// time in tools between its steps; ModelTime Σ its steps' E2E, the server's part.
	Steps     Dist `json:"steps"`
	TaskTime  Dist `json:"task_s"`
	ToolTime  Dist `json:"tool_s"`
	ModelTime Dist `json:"model_s"`
	// ToolSharePct is Σ time in tools over Σ (time in tools + time in the model) of
	// those tasks, in % (NaN without one).
	ToolSharePct float64 `json:"tool_share_pct"`
	// CacheHitPct is, per task whose prompts the server counted, the share of its
	// steps' prompt tokens its prefix cache served, in %.
	CacheHitPct Dist `json:"cache_hit_pct"`
	// PerStep are the figures of each step index, from 1.
	PerStep []StepSummary `json:"per_step"`
}

// StepSummary is the figures of one step index over a level's agent loops: each later
// step carries every earlier call and result, which the prefix cache may serve.
type StepSummary struct {
	Step      int `json:"step"`
	Requests  int `json:"requests"`
	Succeeded int `json:"succeeded"`
	// TTFT covers the step's successful requests; PromptTokensMean and
	// CachedTokensMean their mean server-counted prompt and cached tokens (NaN when it
	// counted none).
	TTFT             Dist    `json:"ttft_s"`
	PromptTokensMean float64 `json:"prompt_tokens_mean"`
	CachedTokensMean float64 `json:"cached_tokens_mean"`
}

// agentLoopStore accumulates AgentLoopSummary: per step index a few scalars, per task of
// the run its running sums (never the samples), and the tasks of merged runs as values.
type agentLoopStore struct {
	byStep []stepFigures
	tasks  map[[2]int]*taskFigures // this run's, by session and turn
	folded taskValues
}

type stepFigures struct {
	requests, succeeded         int
	ttft                        valueStore
	promptSum, cachedSum, count int
}

type taskFigures struct {
	steps, last      int
	span             Window
	tool, model      time.Duration
	prompt, cached   int
	failed, limited  bool
	uncountedPrompts bool
}

// taskValues are tasks as wholes.
type taskValues struct {
	tasks, answered, limited, failed     int
	steps, task, tool, model, cacheShare []float64
	toolSum, busySum                     float64
}

// addStep counts a finished request of an agent loop. s is not retained.
func (a *Accumulator) addStep(ev executor.Event) {
	if a.agentLoop == nil {
		a.agentLoop = &agentLoopStore{tasks: map[[2]int]*taskFigures{}}
	}
	st, s := a.agentLoop, ev.Sample
	for len(st.byStep) < ev.Step {
		st.byStep = append(st.byStep, stepFigures{})
	}
	sf := &st.byStep[ev.Step-1]
	sf.requests++
	key := [2]int{ev.Session, ev.Turn}
	tf := st.tasks[key]
	if tf == nil {
		tf = &taskFigures{}
		st.tasks[key] = tf
	}
	tf.steps++
	tf.span.extend(s.Start, s.Start.Add(s.End))
	tf.tool += ev.ToolWait
	tf.model += s.E2E()
	if ev.Step >= tf.last {
		tf.last, tf.limited = ev.Step, ev.StepLimit
	}
	if !s.OK() {
		tf.failed = true
		return
	}
	sf.succeeded++
	if d, ok := s.TTFT(); ok {
		sf.ttft.add(d.Seconds())
	}
	if s.PromptTokens > 0 {
		sf.promptSum += s.PromptTokens
		sf.cachedSum += s.CachedTokens
		sf.count++
		tf.prompt += s.PromptTokens
		tf.cached += s.CachedTokens
	} else {
		tf.uncountedPrompts = true
	}
}

// wholes are the store's tasks as wholes, its own run's and those merged in.
func (st *agentLoopStore) wholes() taskValues {
	v := st.folded
	v.steps, v.task, v.tool, v.model, v.cacheShare = clone(v.steps), clone(v.task), clone(v.tool), clone(v.model), clone(v.cacheShare)
	for _, tf := range st.tasks {
		v.tasks++
		v.steps = append(v.steps, float64(tf.steps))
		switch {
		case tf.failed:
			v.failed++
			continue
		case tf.limited:
			v.limited++
		default:
			v.answered++
		}
		v.task = append(v.task, tf.span.Seconds())
		v.tool = append(v.tool, tf.tool.Seconds())
		v.model = append(v.model, tf.model.Seconds())
		v.toolSum += tf.tool.Seconds()
		v.busySum += tf.tool.Seconds() + tf.model.Seconds()
		if !tf.uncountedPrompts && tf.prompt > 0 {
			v.cacheShare = append(v.cacheShare, 100*float64(tf.cached)/float64(tf.prompt))
		}
	}
	return v
}

func clone(v []float64) []float64 { return append([]float64(nil), v...) }

// merge adds o's tasks and steps (another run's) to st.
func (st *agentLoopStore) merge(o *agentLoopStore) {
	for len(st.byStep) < len(o.byStep) {
		st.byStep = append(st.byStep, stepFigures{})
	}
	for i := range o.byStep {
		s, os := &st.byStep[i], &o.byStep[i]
		s.requests += os.requests
		s.succeeded += os.succeeded
		s.ttft.merge(&os.ttft)
		s.promptSum += os.promptSum
		s.cachedSum += os.cachedSum
		s.count += os.count
	}
	w, f := o.wholes(), &st.folded
	f.tasks += w.tasks
	f.answered += w.answered
	f.limited += w.limited
	f.failed += w.failed
	f.steps = append(f.steps, w.steps...)
	f.task = append(f.task, w.task...)
	f.tool = append(f.tool, w.tool...)
	f.model = append(f.model, w.model...)
	f.cacheShare = append(f.cacheShare, w.cacheShare...)
	f.toolSum += w.toolSum
	f.busySum += w.busySum
}

// summary derives the agent loops' figures.
func (st *agentLoopStore) summary() *AgentLoopSummary {
	v := st.wholes()
	out := &AgentLoopSummary{Tasks: v.tasks, Answered: v.answered, StepLimited: v.limited, Failed: v.failed,
		Steps: NewDist(v.steps), TaskTime: NewDist(v.task), ToolTime: NewDist(v.tool), ModelTime: NewDist(v.model),
		ToolSharePct: ratio(100*v.toolSum, v.busySum), CacheHitPct: NewDist(v.cacheShare)}
	for i := range st.byStep {
		sf := &st.byStep[i]
		out.PerStep = append(out.PerStep, StepSummary{Step: i + 1, Requests: sf.requests, Succeeded: sf.succeeded,
			TTFT: sf.ttft.dist(), PromptTokensMean: ratio(float64(sf.promptSum), float64(sf.count)),
			CachedTokensMean: ratio(float64(sf.cachedSum), float64(sf.count))})
	}
	return out
}

// stepOfTurn counts an agent loop's later step (2 on) against its session: the turn's
// first step stands for the turn in the per-turn figures, and a later step that fails
// fails its turn. s is not retained.
func (st *sessionStore) stepOfTurn(session int, s *backends.Sample) {
	sp := st.spans[session]
	if sp == nil {
		return
	}
	sp.span.extend(s.Start, s.Start.Add(s.End))
	if !s.OK() {
		sp.ok--
	}
}

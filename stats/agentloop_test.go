package stats

import (
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// agentRun feeds one run of three one-turn agent tasks to an accumulator: task 1 calls
// a tool twice and answers at step 3 (each step 1s of model time, 0.5s in tools before
// steps 2 and 3, step k's prompt 1000k tokens of which the cache served all but 1000),
// task 2 is ended by the step limit at step 2, and task 3 fails its step 2.
func agentRun(t0 time.Time) *Accumulator {
	acc := NewAccumulator(Target{Turns: 1})
	add := func(session, step int, start time.Time, s backends.Sample, wait time.Duration, limit bool) {
		s.Start = start
		acc.Add(executor.Event{Sample: &s, Session: session, Turn: 1, Step: step, ToolWait: wait, StepLimit: limit})
	}
	for k := 1; k <= 3; k++ {
		wait := time.Duration(0)
		if k > 1 {
			wait = 500 * time.Millisecond
		}
		add(1, k, t0.Add(time.Duration(k-1)*1500*time.Millisecond),
			backends.Sample{FirstToken: time.Duration(k) * 100 * time.Millisecond, End: time.Second, Chunks: 2, OutputTokens: 2,
				PromptTokens: 1000 * k, CachedTokens: 1000 * (k - 1)}, wait, false)
	}
	add(2, 1, t0, backends.Sample{FirstToken: 100 * time.Millisecond, End: time.Second, Chunks: 1, OutputTokens: 1, PromptTokens: 1000}, 0, false)
	add(2, 2, t0.Add(3*time.Second), backends.Sample{FirstToken: 200 * time.Millisecond, End: time.Second, Chunks: 1, OutputTokens: 1,
		PromptTokens: 2000, CachedTokens: 1000}, 2*time.Second, true)
	add(3, 1, t0, backends.Sample{FirstToken: 100 * time.Millisecond, End: time.Second, Chunks: 1, OutputTokens: 1, PromptTokens: 1000}, 0, false)
	add(3, 2, t0.Add(2*time.Second), backends.Sample{End: time.Second, Err: &backends.Error{Class: backends.ErrServer}}, time.Second, false)
	return acc
}

func TestAgentLoopFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := SummarizeRuns([]MeasuredRun{{Acc: agentRun(t0)}, {Acc: agentRun(t0.Add(time.Minute))}}, Target{Turns: 1})
	a := r.Pooled.AgentLoop
	if a == nil {
		t.Fatal("no agent loop figures")
	}
	// Per run: task 1 spans 0 to 4s with 1s in tools and 3s in the model; task 2 spans
	// 0 to 4s with 2s in tools and 2s in the model; task 3 failed.
	if a.Tasks != 6 || a.Answered != 2 || a.StepLimited != 2 || a.Failed != 2 {
		t.Errorf("tasks %d answered %d limited %d failed %d, want 6, 2, 2, 2", a.Tasks, a.Answered, a.StepLimited, a.Failed)
	}
	if a.Steps.N != 6 || !near(a.Steps.Max, 3) || !near(a.Steps.Mean, 7.0/3) {
		t.Errorf("steps %+v, want 3, 2 and 2 a run", a.Steps)
	}
	if a.TaskTime.N != 4 || !near(a.TaskTime.Max, 4) || !near(a.ToolTime.Mean, 1.5) || !near(a.ModelTime.Mean, 2.5) {
		t.Errorf("task %+v tool %+v model %+v", a.TaskTime, a.ToolTime, a.ModelTime)
	}
	if !near(a.ToolSharePct, 100*3.0/8) {
		t.Errorf("tool share %g%%, want %g%%", a.ToolSharePct, 100*3.0/8)
	}
	// Task 1: 3000 cached of 6000; task 2: 1000 of 3000.
	if a.CacheHitPct.N != 4 || !near(a.CacheHitPct.Max, 50) || !near(a.CacheHitPct.Min, 100.0/3) {
		t.Errorf("cache hit %+v, want 50%% and 33.3%% a run", a.CacheHitPct)
	}
	if len(a.PerStep) != 3 {
		t.Fatalf("%d step summaries, want 3", len(a.PerStep))
	}
	for i, want := range []struct {
		requests, ok   int
		ttft, p, cache float64
	}{{6, 6, 0.1, 1000, 0}, {6, 4, 0.2, 2000, 1000}, {2, 2, 0.3, 3000, 2000}} {
		got := a.PerStep[i]
		if got.Step != i+1 || got.Requests != want.requests || got.Succeeded != want.ok || !near(got.TTFT.P50, want.ttft) ||
			!near(got.PromptTokensMean, want.p) || !near(got.CachedTokensMean, want.cache) {
			t.Errorf("step %d: %+v, want %+v", i+1, got, want)
		}
	}
	// The sessions' figures count a turn once, failed when a later step failed.
	if s := r.Pooled.Sessions; s == nil || s.Sessions != 6 || s.Completed != 4 || len(r.Pooled.Turns) != 1 || r.Pooled.Turns[0].Requests != 6 {
		t.Errorf("sessions %+v turns %+v: want 6 sessions, 4 completed, turn 1 of 6 requests", s, r.Pooled.Turns)
	}
	// Time in tools is no server figure: E2E is the steps' own.
	if !near(r.Pooled.E2E.Max, 1) {
		t.Errorf("E2E max %g s, want the steps' 1s", r.Pooled.E2E.Max)
	}
}

package stats

import (
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// A level whose requests asked their own prompt lengths (a trace's input lengths)
// reports the mean they asked, not the workload's prompt_tokens (the trace-replay
// report showed "128 → 345.4": the default against the trace's); without them, the
// target's. Merged accumulators keep the sum.
func TestPromptTokensRequestedIsWhatTheRequestsAsked(t *testing.T) {
	t0 := time.Unix(0, 0)
	req := func(asked, got int) *backends.Sample {
		return &backends.Sample{Start: t0, End: time.Millisecond, FirstToken: time.Millisecond / 2, OutputTokens: 1,
			PromptTokens: got, PromptTokensAsked: asked}
	}
	a, b := NewAccumulator(Target{PromptTokens: 128}), NewAccumulator(Target{PromptTokens: 128})
	a.Add(executor.Event{Sample: req(300, 301)})
	b.Add(executor.Event{Sample: req(391, 390)})
	a.merge(b)
	if got := a.Summary(Window{}).PromptTokensRequested; got != 346 {
		t.Errorf("asked %d, want 346 (the mean of 300 and 391)", got)
	}
	c := NewAccumulator(Target{PromptTokens: 128})
	c.Add(executor.Event{Sample: req(0, 130)})
	if got := c.Summary(Window{}).PromptTokensRequested; got != 128 {
		t.Errorf("asked %d, want the target's 128", got)
	}
}

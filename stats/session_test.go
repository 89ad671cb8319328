package stats

import (
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// sessionRun feeds one run of two 3-turn sessions to an accumulator: session 1 succeeds
// throughout (turn k has TTFT k×100ms and k×1000 prompt tokens), session 2 fails its
// turn 2, so its turn 3 is never sent.
func sessionRun(t0 time.Time) *Accumulator {
	acc := NewAccumulator(Target{Turns: 3})
	add := func(session, turn int, s backends.Sample) {
		acc.addSample(&s)
		acc.addTurn(session, turn, &s)
	}
	for k := 1; k <= 3; k++ {
		ttft := time.Duration(k) * 100 * time.Millisecond
		start := t0.Add(time.Duration(k-1) * 2 * time.Second)
		add(1, k, backends.Sample{Start: start, FirstToken: ttft, End: time.Second, Chunks: 2, OutputTokens: 2, PromptTokens: 1000 * k})
	}
	add(2, 1, backends.Sample{Start: t0, FirstToken: 300 * time.Millisecond, End: time.Second, Chunks: 2, OutputTokens: 2, PromptTokens: 3000})
	add(2, 2, backends.Sample{Start: t0.Add(2 * time.Second), End: time.Second, Err: &backends.Error{Class: backends.ErrServer}})
	return acc
}

func TestSessionFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// Two runs pooled: every figure below counts both.
	r := SummarizeRuns([]MeasuredRun{{Acc: sessionRun(t0)}, {Acc: sessionRun(t0.Add(time.Minute))}}, Target{Turns: 3})
	p := r.Pooled
	if len(p.Turns) != 3 {
		t.Fatalf("%d turn summaries, want 3", len(p.Turns))
	}
	for i, want := range []struct {
		requests, ok int
		ttftP50      float64
		prompt       float64
	}{{4, 4, 0.2, 2000}, {4, 2, 0.2, 2000}, {2, 2, 0.3, 3000}} {
		got := p.Turns[i]
		if got.Turn != i+1 || got.Requests != want.requests || got.Succeeded != want.ok ||
			!near(got.TTFT.P50, want.ttftP50) || !near(got.PromptTokensMean, want.prompt) {
			t.Errorf("turn %d: %+v, want requests %d ok %d ttft p50 %g prompt mean %g", i+1, got, want.requests, want.ok, want.ttftP50, want.prompt)
		}
	}
	s := p.Sessions
	// Session 1 spans 0s to 4s+1s; session 2 sends 2 turns, succeeds 1 and skips 1.
	if s == nil || s.Turns != 3 || s.Sessions != 4 || s.Completed != 2 || s.TurnsNotSent != 2 ||
		!near(s.Duration.P50, 5) || s.Duration.N != 2 || !near(s.TurnsCompleted.Mean, 2) {
		t.Errorf("sessions %+v", s)
	}
	if one := r.PerRun[0].Sessions; one == nil || one.Sessions != 2 || one.Completed != 1 || one.TurnsNotSent != 1 {
		t.Errorf("one run's sessions %+v, want 2 sessions, 1 completed, 1 turn not sent", one)
	}
}

// A turn's mean prompt is over the requests the server counted: one it did not count (0
// tokens) does not halve it.
func TestSessionPromptMeanSkipsUncounted(t *testing.T) {
	t0 := time.Unix(1000, 0)
	acc := NewAccumulator(Target{Turns: 1})
	for session, prompt := range []int{1000, 0} {
		s := backends.Sample{Start: t0, FirstToken: time.Millisecond, End: time.Second, Chunks: 1, OutputTokens: 1, PromptTokens: prompt}
		acc.addSample(&s)
		acc.addTurn(session+1, 1, &s)
	}
	l := acc.Summary(Window{})
	if len(l.Turns) != 1 || l.Turns[0].Succeeded != 2 || !near(l.Turns[0].PromptTokensMean, 1000) {
		t.Fatalf("turns %+v, want one turn of 2 requests with a mean prompt of 1000", l.Turns)
	}
}

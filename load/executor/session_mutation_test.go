package executor

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A session waits its think time on the executor's clock between turns, never before
// the first: one slot, two sessions of three 5 ms turns with 7 ms to think send at 0,
// 12 and 24 ms, then (the next session at once) at 29, 41 and 53 ms, as requests
// 0 to 5, each event with its session and turn.
func TestSessionThinkTimeOnClock(t *testing.T) {
	t0 := time.Unix(5000, 0)
	clk := &rampClock{now: t0}
	b := &clockBackend{clk: clk, delay: 5 * time.Millisecond}
	const think = 7 * time.Millisecond
	lv := LevelSpec{Concurrency: 1, Requests: 6, RepeatRuns: 1, Prompts: &Prompts{Words: 1},
		Session: &SessionSpec{Turns: 3, ThinkTime: think, Sessions: 2}}
	var ev rampEvents
	RunLevel(context.Background(), b, lv, Options{Clock: clk, OnRequest: ev.add})
	if want := []time.Duration{think, think, think, think}; !slices.Equal(clk.waits, want) {
		t.Errorf("waited %v, want %v", clk.waits, want)
	}
	at := []time.Duration{0, 12, 24, 29, 41, 53}
	if len(ev.measured) != len(at) || len(ev.ramp) != 0 {
		t.Fatalf("%d requests (%d ramp), want %d", len(ev.measured), len(ev.ramp), len(at))
	}
	for n, e := range ev.measured {
		if got, want := e.Sample.Start.Sub(t0), at[n]*time.Millisecond; got != want || e.Index != n || e.Session != n/3+1 || e.Turn != n%3+1 {
			t.Errorf("request %d (session %d turn %d) at %v, want request %d (session %d turn %d) at %v",
				e.Index, e.Session, e.Turn, got, n, n/3+1, n%3+1, want)
		}
	}
}

package stats

import (
	"math"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// The steady window's throughput, by hand: every request gives 10 tokens, its first
// 10 ms after its start and the other 9 evenly to its end 100 ms after its start.
func TestSteadyThroughput(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	req := func(from, slot, tokens int) *backends.Sample {
		return &backends.Sample{Start: t0.Add(ms(from)), FirstToken: ms(10), End: ms(100), Slot: slot,
			OutputTokens: tokens, Chunks: tokens, TokenSource: backends.TokensUsage}
	}
	t.Run("closed loop with a ramp", func(t *testing.T) {
		// Slot 1 sends at 0, 100, 200 ms; slot 2, started 50 ms later, at 50, 150, 250.
		// Steady window: the 2nd start (50) to the last (250). In it: 5 tokens of the
		// request at 0 (its rest, 50 of 90 ms), 10 of each at 50, 100 and 150, 5 of the
		// one at 200 (its first, and 40 of 90 ms of the rest), none of the one at 250
		// (its first token comes at 260): 40 tokens in 200 ms, 200 tok/s, the slots'
		// own 2 × 10 / 100 ms. The whole window, 60 tokens over 350 ms, is lower by the
		// ramp's and the drain's share.
		a := NewAccumulator(Target{Concurrency: 2, SLO: SLO{TTFT: ms(20)}})
		for _, s := range []*backends.Sample{req(0, 1, 10), req(100, 1, 10), req(200, 1, 10), req(50, 2, 10), req(150, 2, 10), req(250, 2, 10)} {
			a.addSample(s)
		}
		l := a.Summary(Window{})
		d := l.Delivered
		if !near(d.SteadyOutputTokS, 200) || !near(d.SteadySeconds, 0.2) || !near(d.SteadyGoodputTokS, 200) {
			t.Errorf("steady %v tok/s (goodput %v) over %v s, want 200 over 0.2", d.SteadyOutputTokS, d.SteadyGoodputTokS, d.SteadySeconds)
		}
		if !near(l.OutputTokS, 60/0.35) {
			t.Errorf("whole window %v tok/s, want %v", l.OutputTokS, 60/0.35)
		}
	})
	t.Run("goodput counts the good requests' tokens", func(t *testing.T) {
		a := NewAccumulator(Target{Concurrency: 2, SLO: SLO{E2E: ms(100)}})
		late := req(100, 1, 10)
		late.End = ms(100) + time.Microsecond // misses the E2E limit
		for _, s := range []*backends.Sample{req(0, 1, 10), late, req(50, 2, 10), req(150, 2, 10)} {
			a.addSample(s)
		}
		// Window 50 → 150: the request at 0 gives 5, the one at 50 gives 10, the late one
		// at 100 gives its first and 40/90 of the rest (but counts only in all tokens),
		// the one at 150 none (its first at 160).
		d := a.Summary(Window{}).Delivered
		late4 := 1 + 9*(40/(90+0.001))
		if !near(d.SteadyOutputTokS, (15+late4)/0.1) || !near(d.SteadyGoodputTokS, 150) {
			t.Errorf("steady %v, goodput %v; want %v, 150", d.SteadyOutputTokS, d.SteadyGoodputTokS, (15+late4)/0.1)
		}
	})
	t.Run("open loop from the first end to the last send", func(t *testing.T) {
		// Sent every 50 ms from 0 to 300: the first ends at 100, the last is sent at 300.
		// In [100, 300): the request sent at 0 gives none (its rest ends at 100), at 50
		// 5 (50 of its 90 ms), at 100, 150 and 200 10 each, at 250 5 (its first and 40
		// of 90 ms), at 300 none: 40 tokens in 200 ms, the rate's 20/s × 10 tokens.
		a := NewAccumulator(Target{})
		for i := range 7 {
			a.Add(executor.Event{Sample: req(50*i, 0, 10), Paced: true, Scheduled: ms(50 * i)})
		}
		d := a.Summary(Window{}).Delivered
		if !near(d.SteadySeconds, 0.2) || !near(d.SteadyOutputTokS, 200) {
			t.Errorf("open loop steady %v over %v s, want 200 over 0.2", d.SteadyOutputTokS, d.SteadySeconds)
		}
		if !math.IsNaN(d.SteadyGoodputTokS) {
			t.Errorf("goodput %v without an SLO", d.SteadyGoodputTokS)
		}
	})
	t.Run("no more requests than slots: no steady window", func(t *testing.T) {
		a := NewAccumulator(Target{Concurrency: 2})
		a.addSample(req(0, 1, 10))
		a.addSample(req(5, 2, 10))
		if d := a.Summary(Window{}).Delivered; !math.IsNaN(d.SteadyOutputTokS) {
			t.Errorf("steady %v from two requests on two slots", d.SteadyOutputTokS)
		}
	})
}

// A run's timeline: 100 ms slices (a short window), cut again at the steady window's
// ends, holding every request's start, end, time in flight and tokens once; its steady
// slices give the steady figure back.
func TestTimelineSlices(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	req := func(from, slot, ttft int) *backends.Sample {
		return &backends.Sample{Start: t0.Add(ms(from)), FirstToken: ms(ttft), End: ms(100), Slot: slot,
			OutputTokens: 10, Chunks: 10, TokenSource: backends.TokensUsage}
	}
	a := NewAccumulator(Target{Concurrency: 2})
	// As TestSteadyThroughput's closed loop, the request at 150 ms with a TTFT of 30 ms.
	for _, s := range []*backends.Sample{req(0, 1, 10), req(100, 1, 10), req(200, 1, 10), req(50, 2, 10), req(150, 2, 30), req(250, 2, 10)} {
		a.addSample(s)
	}
	l := a.Summary(Window{})
	tl := l.Delivered.Timeline
	if tl == nil || !tl.Origin.Equal(t0) || tl.Resolution != 0.1 {
		t.Fatalf("timeline %+v", tl)
	}
	// Edges: 0, 50 (steady from), 100, 200, 250 (steady to), 300, 350 ms.
	var edges []float64
	var started, finished int
	var tokens, busy float64
	for _, s := range tl.Slices {
		edges = append(edges, s.From)
		started, finished, tokens, busy = started+s.Started, finished+s.Finished, tokens+s.OutputTokens, busy+s.InFlight*(s.To-s.From)
	}
	want := []float64{0, 0.05, 0.1, 0.2, 0.25, 0.3}
	if len(edges) != len(want) {
		t.Fatalf("slices from %v, want %v", edges, want)
	}
	for i := range want {
		if !near(edges[i], want[i]) {
			t.Fatalf("slices from %v, want %v", edges, want)
		}
	}
	if started != 6 || finished != 6 || !near(tokens, 60) || !near(busy, 0.6) {
		t.Errorf("started %d, finished %d, tokens %v, busy %v s; want 6, 6, 60, 0.6", started, finished, tokens, busy)
	}
	steady := 0
	for _, s := range tl.Slices {
		if s.Steady {
			steady++
		}
	}
	if steady != 3 || !near(tl.SteadyOutputTokS(), l.Delivered.SteadyOutputTokS) {
		t.Errorf("%d steady slices giving %v tok/s, want 3 giving the run's %v", steady, tl.SteadyOutputTokS(), l.Delivered.SteadyOutputTokS)
	}
	// The slice [100, 200) saw the requests started at 100 and 150 (TTFT 10 and 30 ms).
	if s := tl.Slices[2]; s.Started != 2 || !near(s.TTFTP50, 0.02) || !near(s.TTFTMax, 0.03) || !near(s.InFlight, 2) {
		t.Errorf("slice %+v, want 2 started, TTFT p50 0.02 max 0.03, 2 in flight", s)
	}
	if r := SummarizeRuns([]MeasuredRun{{Acc: a}}, Target{Concurrency: 2}); r.Pooled.Delivered.Timeline != nil || r.Median.Delivered.Timeline != nil {
		t.Error("a pooled or median summary has a timeline: it is each run's own")
	}
}

package executor

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// rampClock moves only when it is told: by advance (a request's time on the server) and
// by Wait (the executor waiting on it; each wait noted), so times read on it do not
// depend on how the goroutines are scheduled. A Wait moves the clock on by its d, or,
// with block, waits for the requests to move it that far (as a timer would): a slot
// then sends nothing until the others' requests have filled its wait. A wait not over
// within a second of real time (nothing moved the clock) is noted as stalled and ended.
type rampClock struct {
	mu      sync.Mutex
	moved   *sync.Cond
	now     time.Time
	block   bool
	waits   []time.Duration
	stalled int
}

func (c *rampClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *rampClock) Wait(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	until := c.now.Add(d)
	if !c.block {
		c.now = until
		return
	}
	if c.moved == nil {
		c.moved = sync.NewCond(&c.mu)
	}
	stall := time.AfterFunc(time.Second, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.now.Before(until) {
			c.stalled++
			c.now = until
		}
		c.moved.Broadcast()
	})
	defer stall.Stop()
	for c.now.Before(until) {
		c.moved.Wait()
	}
}

func (c *rampClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	if c.moved != nil {
		c.moved.Broadcast()
	}
}

// clockBackend answers every request after delay on its clock: it stamps the start on
// it, then moves it on.
type clockBackend struct {
	fakeBackend
	clk   *rampClock
	delay time.Duration
}

func (c *clockBackend) Do(_ context.Context, req backends.Request) backends.Sample {
	c.calls.Add(1)
	s := backends.Sample{ID: req.ID, Start: c.clk.Now(), End: c.delay, FirstToken: c.delay / 2, Chunks: 1, OutputTokens: 1}
	c.clk.advance(c.delay)
	return s
}

// rampEvents collects a run's events, each with its own copy of its Sample: the ramp's
// and the measured ones, in the order they finished.
type rampEvents struct {
	ramp, measured []Event
}

func (r *rampEvents) add(e Event) {
	s := *e.Sample
	e.Sample = &s
	if e.Ramp {
		r.ramp = append(r.ramp, e)
	} else {
		r.measured = append(r.measured, e)
	}
}

// One slot ramps alone: it sends ramp requests back to back, on its clock, until the
// ramp is over (0, 5, …, 35 ms: 8 of them, numbered after the 3 measured), then the 3
// measured ones, at 40, 45 and 50 ms, which alone make the run's samples and window.
func TestClosedLoopRampOneSlot(t *testing.T) {
	t0 := time.Unix(3000, 0)
	clk := &rampClock{now: t0}
	b := &clockBackend{clk: clk, delay: 5 * time.Millisecond}
	lv := LevelSpec{Concurrency: 1, Requests: 3, RepeatRuns: 1, Ramp: 40 * time.Millisecond, Prompts: &Prompts{Words: 1}}
	var ev rampEvents
	res := RunLevel(context.Background(), b, lv, Options{Clock: clk, OnRequest: ev.add})
	if len(ev.ramp) != 8 || len(ev.measured) != 3 {
		t.Fatalf("%d ramp and %d measured requests, want 8 and 3", len(ev.ramp), len(ev.measured))
	}
	for k, e := range ev.ramp {
		if want := t0.Add(time.Duration(k) * 5 * time.Millisecond); e.Index != 3+k || e.Sample.Slot != 1 || !e.Sample.Start.Equal(want) {
			t.Errorf("ramp request %d: number %d slot %d at %v, want number %d slot 1 at %v",
				k, e.Index, e.Sample.Slot, e.Sample.Start.Sub(t0), 3+k, want.Sub(t0))
		}
	}
	run := res.Runs[0]
	if len(run.Samples) != 3 {
		t.Fatalf("%d samples, want the 3 measured", len(run.Samples))
	}
	for n, s := range run.Samples {
		if want := t0.Add(time.Duration(40+5*n) * time.Millisecond); !s.Start.Equal(want) || s.Slot != 1 {
			t.Errorf("measured request %d at %v from slot %d, want %v from slot 1", n, s.Start.Sub(t0), s.Slot, want.Sub(t0))
		}
	}
	if run.Start.Sub(t0) != 40*time.Millisecond || run.End.Sub(t0) != 55*time.Millisecond {
		t.Errorf("window %v to %v, want 40ms to 55ms", run.Start.Sub(t0), run.End.Sub(t0))
	}
	if len(clk.waits) != 0 {
		t.Errorf("the first slot waited %v, want no wait", clk.waits)
	}
}

// Four slots over a 40 ms ramp: slot k waits on the executor's clock until (k−1)·10 ms
// into the run before its first request, which is its ramp's; slot 1 alone sends until
// 10 ms (its ramp requests 8 and 12, at 0 and 5 ms); every slot ramps, with requests
// numbered 8 + k−1 + 4j, and the measured ones all start after the ramp.
func TestClosedLoopRampSlots(t *testing.T) {
	t0 := time.Unix(4000, 0)
	clk := &rampClock{now: t0, block: true}
	b := &clockBackend{clk: clk, delay: 5 * time.Millisecond}
	const ramp = 40 * time.Millisecond
	lv := LevelSpec{Concurrency: 4, Requests: 8, RepeatRuns: 1, Ramp: ramp, Prompts: &Prompts{Words: 1}}
	var ev rampEvents
	res := RunLevel(context.Background(), b, lv, Options{Clock: clk, OnRequest: ev.add})
	if clk.stalled > 0 {
		t.Errorf("%d waits were never over: nothing moved the clock to their end", clk.stalled)
	}
	// A slot's goroutine may start late: it then waits less, or (past its time) not at all.
	if len(clk.waits) > 3 || slices.ContainsFunc(clk.waits, func(d time.Duration) bool { return d <= 0 || d > 30*time.Millisecond }) {
		t.Fatalf("the slots waited %v, want at most 3 waits of up to 30ms", clk.waits)
	}
	ids := map[int]bool{}
	for _, e := range append(ev.ramp, ev.measured...) {
		if ids[e.Index] {
			t.Errorf("request %d sent twice", e.Index)
		}
		ids[e.Index] = true
	}
	first := map[int]time.Time{}
	byIndex := map[int]time.Time{}
	for _, e := range ev.ramp {
		s := e.Sample
		if e.Index < 8 || (e.Index-8)%4 != s.Slot-1 {
			t.Errorf("ramp request of slot %d numbered %d, want 8 + slot−1 + 4j", s.Slot, e.Index)
		}
		byIndex[e.Index] = s.Start
		if f, ok := first[s.Slot]; !ok || s.Start.Before(f) {
			first[s.Slot] = s.Start
		}
	}
	if len(first) != 4 || len(ev.measured) != 8 || b.calls.Load() != int64(8+len(ev.ramp)) {
		t.Fatalf("%d calls: %d measured, %d ramp requests from %d slots; want 8 measured and a ramp from each of 4",
			b.calls.Load(), len(ev.measured), len(ev.ramp), len(first))
	}
	for n, at := range map[int]time.Duration{8: 0, 12: 5 * time.Millisecond} {
		if got, ok := byIndex[n]; !ok || got.Sub(t0) != at {
			t.Errorf("slot 1's ramp request %d at %v (sent: %v), want %v", n, got.Sub(t0), ok, at)
		}
	}
	for k := 1; k <= 4; k++ {
		if d := first[k].Sub(t0); d < time.Duration(k-1)*ramp/4 {
			t.Errorf("slot %d started %v into the run, want at least %v", k, d, time.Duration(k-1)*ramp/4)
		}
	}
	run := res.Runs[0]
	if len(run.Samples) != 8 {
		t.Fatalf("%d samples, want the 8 measured", len(run.Samples))
	}
	for _, s := range run.Samples {
		if s.Start.Sub(t0) < ramp {
			t.Errorf("slot %d: a measured request started %v into the run, inside the %v ramp", s.Slot, s.Start.Sub(t0), ramp)
		}
	}
	if run.Start.Sub(t0) < ramp {
		t.Errorf("the window starts %v into the run, inside the ramp", run.Start.Sub(t0))
	}
}

// On the system clock the slots wait on a timer: each still ramps, and the measured
// requests are the run's samples (no timing is asserted on the wall clock).
func TestClosedLoopRampSystemClock(t *testing.T) {
	f := &fakeBackend{delay: time.Millisecond}
	lv := LevelSpec{Concurrency: 2, Requests: 4, RepeatRuns: 1, Ramp: 4 * time.Millisecond, Prompts: &Prompts{Words: 1}}
	var ev rampEvents
	res := RunLevel(context.Background(), f, lv, Options{OnRequest: ev.add})
	slots := map[int]bool{}
	for _, e := range ev.ramp {
		slots[e.Sample.Slot] = true
	}
	if len(slots) != 2 || len(ev.measured) != 4 || len(res.Runs[0].Samples) != 4 {
		t.Fatalf("ramp requests from %d slots, %d measured, %d samples; want 2, 4, 4", len(slots), len(ev.measured), len(res.Runs[0].Samples))
	}
}

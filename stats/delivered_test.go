package stats

import (
	"math"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// The load delivered, on spans whose in-flight counts are known at every instant.
func TestDeliveredInFlight(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	req := func(from, to int) *backends.Sample {
		return &backends.Sample{Start: t0.Add(ms(from)), End: ms(to - from), FirstToken: ms(1), OutputTokens: 1}
	}
	// Two slots over 0–100 ms: slot A runs 0–50 and 50–100 (back to back), slot B
	// 10–60 and 60–90. In flight: 1 on 0–10, 2 on 10–90, 1 on 90–100.
	a := NewAccumulator(Target{Concurrency: 2})
	for _, s := range []*backends.Sample{req(0, 50), req(10, 60), req(50, 100), req(60, 90)} {
		a.addSample(s)
	}
	d := a.Summary(Window{}).Delivered
	if !near(d.InFlightMean, (10*1+80*2+10*1)/100.0) || d.InFlightMax != 2 || d.InFlightP99 != 2 {
		t.Fatalf("in flight mean %v, max %v, p99 %v; want 1.8, 2, 2", d.InFlightMean, d.InFlightMax, d.InFlightP99)
	}
	// Held span: the 2nd start (10 ms) to the last start (60 ms), all at 2.
	if !near(d.InFlightHeld, 2) || !near(d.HeldSeconds, 0.05) || !near(d.RampSeconds, 0.01) {
		t.Fatalf("held %v over %v s after a ramp of %v s, want 2 over 0.05 after 0.01", d.InFlightHeld, d.HeldSeconds, d.RampSeconds)
	}
	if !math.IsNaN(d.RateScheduled) || !math.IsNaN(d.RateDelivered) {
		t.Fatalf("rates %v, %v without paced requests", d.RateScheduled, d.RateDelivered)
	}

	// Pooled with a second run, 1 s later: 1 in flight for 100 ms. The gap between the
	// runs is in neither window.
	b := NewAccumulator(Target{Concurrency: 2})
	b.addSample(req(1000, 1100))
	r := SummarizeRuns([]MeasuredRun{{Acc: a}, {Acc: b}}, Target{Concurrency: 2})
	if p := r.Pooled.Delivered; !near(p.InFlightMean, (180+100)/200.0) || p.InFlightMax != 2 || !near(p.InFlightHeld, 2) ||
		!near(p.RampSeconds, 0.01) {
		t.Fatalf("pooled in flight mean %v, max %v, held %v, ramp %v; want 1.4, 2, 2, 0.01", p.InFlightMean, p.InFlightMax, p.InFlightHeld, p.RampSeconds)
	}
}

// A request is in flight until its body ends (a server's tail after the last token),
// and each slot's gap from one request's body end to its next start is the client's
// turnaround, counted inside the held span only.
func TestDeliveredTurnaround(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// from, last token, body end, in ms; slot.
	req := func(from, last, body, slot int) *backends.Sample {
		return &backends.Sample{Start: t0.Add(ms(from)), End: ms(last - from), BodyEnd: ms(body - from), Slot: slot,
			FirstToken: ms(1), OutputTokens: 1}
	}
	// Slot 1: 0–40 (body to 50), idle to 55, 55–90 (body to 100). Slot 2: 10–50 (body
	// to 60), idle to 70, 70–100. Held span: 10 (2nd start) to 70 (last start): 60 ms.
	a := NewAccumulator(Target{Concurrency: 2})
	for _, s := range []*backends.Sample{req(0, 40, 50, 1), req(10, 50, 60, 2), req(55, 90, 100, 1), req(70, 100, 100, 2)} {
		a.addSample(s)
	}
	d := a.Summary(Window{}).Delivered
	// Busy in the held span: slot 1 10–50 and 55–70 (55 ms), slot 2 10–60 (50 ms);
	// idle: 50–55 and 60–70 (15 ms).
	if !near(d.InFlightHeld, 105.0/60) || !near(d.IdleHeld, 15.0/60) || !near(d.HeldSeconds, 0.06) {
		t.Fatalf("held %v, idle %v over %v s; want %v, %v over 0.06", d.InFlightHeld, d.IdleHeld, d.HeldSeconds, 105.0/60, 15.0/60)
	}
	// Each turnaround on its own: 5 ms in slot 1, 10 ms in slot 2.
	if tr := d.Turnaround; tr.N != 2 || !near(tr.Min, 0.005) || !near(tr.Max, 0.010) || !near(tr.Mean, 0.0075) {
		t.Fatalf("turnaround %+v, want 5 and 10 ms", tr)
	}
	// Pooled with itself: the same means, and every run's turnarounds.
	r := SummarizeRuns([]MeasuredRun{{Acc: a}, {Acc: a}}, Target{Concurrency: 2})
	if p := r.Pooled.Delivered; !near(p.InFlightHeld, 105.0/60) || !near(p.IdleHeld, 15.0/60) {
		t.Fatalf("pooled held %v, idle %v", p.InFlightHeld, p.IdleHeld)
	}
	if tr := r.Pooled.Delivered.Turnaround; tr.N != 4 || !near(tr.Max, 0.010) || !near(tr.Min, 0.005) {
		t.Fatalf("pooled turnaround %+v, want two runs of 5 and 10 ms", tr)
	}
	// Without slots (paced requests) there is no turnaround.
	b := NewAccumulator(Target{Concurrency: 2})
	for _, s := range []*backends.Sample{req(0, 40, 50, 0), req(10, 50, 60, 0), req(55, 90, 100, 0)} {
		b.addSample(s)
	}
	if d := b.Summary(Window{}).Delivered; d.IdleHeld != 0 || d.Turnaround.N != 0 {
		t.Fatalf("idle %v, turnaround %+v without slots", d.IdleHeld, d.Turnaround)
	}
}

// Paced requests: the schedule's own rate and the start stamps' rate.
func TestDeliveredRate(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := NewAccumulator(Target{})
	// Due every 10 ms from 50 ms into the run (100/s); sent every 20 ms (50/s).
	for i := range 5 {
		s := &backends.Sample{Start: t0.Add(time.Duration(20*i) * time.Millisecond), End: time.Millisecond}
		a.addSample(s)
		a.addPaced(time.Duration(50+10*i)*time.Millisecond, s)
	}
	d := a.Summary(Window{}).Delivered
	if !near(d.RateScheduled, 100) || !near(d.RateDelivered, 50) {
		t.Fatalf("rates %v scheduled, %v delivered; want 100, 50", d.RateScheduled, d.RateDelivered)
	}
	if !math.IsNaN(d.InFlightHeld) || !math.IsNaN(d.RampSeconds) {
		t.Fatalf("held %v, ramp %v without a closed loop's slots", d.InFlightHeld, d.RampSeconds)
	}
}

// The in-flight figures and the held span on small layouts whose counts are known at
// every instant: the p99 at the 99% edge, a held span of slotless requests, requests
// due or sent at one instant.
func TestDeliveredEdges(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// from, to in ms; slot.
	type req struct{ from, to, slot int }
	nan := math.NaN()
	tests := []struct {
		name        string
		concurrency int
		reqs        []req
		mean, p99   float64
		max         int
		held, idle  float64
		heldS, rmpS float64
	}{
		// 1 in flight on 0–990 ms, 2 on 990–1000: exactly 99% of the window at 1 or fewer.
		{"p99 at the edge", 0, []req{{0, 1000, 0}, {990, 1000, 0}}, 1.01, 1, 2, nan, nan, 0, nan},
		// 2 in flight on 989–1000: 1.1% of the window above 1.
		{"p99 past the edge", 0, []req{{0, 1000, 0}, {989, 1000, 0}}, 1.011, 2, 2, nan, nan, 0, nan},
		// Slotless requests under a closed loop's target: the held span (20–40 ms) has 1
		// in flight on 20–30 and none on 30–40, and no slot's turnaround: a gap between two
		// requests of no slot is not a slot standing idle.
		{"no slots", 2, []req{{0, 10, 0}, {20, 30, 0}, {40, 50, 0}}, 0.6, 1, 1, 0.5, 0, 0.02, 0.02},
		// As many requests as slots: no held span, only the ramp.
		{"slots filled once", 2, []req{{0, 30, 1}, {10, 40, 2}}, 1.5, 2, 2, nan, nan, 0, 0.01},
		// Fewer requests than slots: the ramp runs to the last start.
		{"slots never filled", 3, []req{{0, 30, 1}, {10, 40, 2}}, 1.5, 2, 2, nan, nan, 0, 0.01},
		// A zero-length request adds no time at any count.
		{"zero-length request", 0, []req{{0, 10, 0}, {5, 5, 0}}, 1, 1, 1, nan, nan, 0, nan},
		{"only zero-length", 0, []req{{5, 5, 0}}, nan, nan, 0, nan, nan, 0, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccumulator(Target{Concurrency: tt.concurrency})
			for _, r := range tt.reqs {
				a.addSample(&backends.Sample{Start: t0.Add(ms(r.from)), End: ms(r.to - r.from), Slot: r.slot})
			}
			d := a.Summary(Window{}).Delivered
			if !near(d.InFlightMean, tt.mean) || !near(d.InFlightP99, tt.p99) || d.InFlightMax != tt.max {
				t.Errorf("in flight mean %v, p99 %v, max %v; want %v, %v, %v", d.InFlightMean, d.InFlightP99, d.InFlightMax,
					tt.mean, tt.p99, tt.max)
			}
			if !near(d.InFlightHeld, tt.held) || !near(d.IdleHeld, tt.idle) || !near(d.HeldSeconds, tt.heldS) ||
				!near(d.RampSeconds, tt.rmpS) {
				t.Errorf("held %v, idle %v over %v s, ramp %v s; want %v, %v over %v, %v", d.InFlightHeld, d.IdleHeld,
					d.HeldSeconds, d.RampSeconds, tt.held, tt.idle, tt.heldS, tt.rmpS)
			}
		})
	}
}

// Paced requests all due at one offset have no scheduled rate, and all sent at one
// instant no delivered rate: NaN, not an infinite rate.
func TestDeliveredRateOneInstant(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := NewAccumulator(Target{})
	for i := range 3 {
		s := &backends.Sample{Start: t0.Add(time.Duration(10*i) * time.Millisecond), End: time.Millisecond}
		a.addSample(s)
		a.addPaced(0, s)
	}
	if d := a.Summary(Window{}).Delivered; !math.IsNaN(d.RateScheduled) || !near(d.RateDelivered, 100) {
		t.Fatalf("rates %v scheduled, %v delivered; want NaN, 100", d.RateScheduled, d.RateDelivered)
	}
	b := NewAccumulator(Target{})
	for i := range 3 {
		s := &backends.Sample{Start: t0, End: time.Millisecond}
		b.addSample(s)
		b.addPaced(time.Duration(10*i)*time.Millisecond, s)
	}
	if d := b.Summary(Window{}).Delivered; !near(d.RateScheduled, 100) || !math.IsNaN(d.RateDelivered) {
		t.Fatalf("rates %v scheduled, %v delivered; want 100, NaN", d.RateScheduled, d.RateDelivered)
	}
}

// A pool merged into another pool carries its merged runs' figures: the same delivered
// load as the pool itself (merge keeps what merged runs left in the store, not only the
// spans of its own run).
func TestDeliveredPoolOfPools(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tgt := Target{Concurrency: 2}
	run := func(off int) *Accumulator {
		a := NewAccumulator(tgt)
		// Slot 1: 0–40, 55–90; slot 2: 10–60, 70–100; paced, due every 10 ms. Held span
		// 10–70 ms: busy 45 + 50 ms, idle 15 + 10 ms.
		for i, r := range [][3]int{{0, 40, 1}, {10, 60, 2}, {55, 90, 1}, {70, 100, 2}} {
			s := &backends.Sample{Start: t0.Add(ms(off + r[0])), End: ms(r[1] - r[0]), Slot: r[2]}
			a.addSample(s)
			a.addPaced(ms(10*i), s)
		}
		return a
	}
	inner := NewAccumulator(tgt)
	inner.merge(run(0))
	inner.merge(run(1000))
	outer := NewAccumulator(tgt)
	outer.merge(inner)
	want, got := inner.load.delivered(), outer.load.delivered()
	if !near(want.InFlightHeld, 95.0/60) || !near(want.IdleHeld, 25.0/60) || !near(want.RateScheduled, 100) {
		t.Fatalf("pool: held %v, idle %v, scheduled %v/s; want %v, %v, 100", want.InFlightHeld, want.IdleHeld,
			want.RateScheduled, 95.0/60, 25.0/60)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"mean", got.InFlightMean, want.InFlightMean}, {"p99", got.InFlightP99, want.InFlightP99},
		{"max", float64(got.InFlightMax), float64(want.InFlightMax)}, {"held", got.InFlightHeld, want.InFlightHeld},
		{"idle", got.IdleHeld, want.IdleHeld}, {"held s", got.HeldSeconds, want.HeldSeconds},
		{"ramp", got.RampSeconds, want.RampSeconds}, {"scheduled", got.RateScheduled, want.RateScheduled},
		{"delivered", got.RateDelivered, want.RateDelivered},
		{"turnarounds", float64(got.Turnaround.N), 4}, {"turnaround p99", got.Turnaround.P99, want.Turnaround.P99},
	} {
		if !near(f.got, f.want) {
			t.Errorf("pool of pools: %s %v, the pool's %v", f.name, f.got, f.want)
		}
	}
}

// The p99 in flight at exactly 99% of the window is judged in whole nanoseconds, not
// by float64 rounding of seconds: 1 in flight for 15.939 s and 2 for 0.161 s is
// exactly 99% at 1 (15.939 / 16.1), and the summed seconds would put 0.99 × the
// window a hair above 15.939, making the p99 2. The same at nanosecond resolution
// (30393 ns and 307 ns), and a nanosecond more at 2 is past the edge.
func TestDeliveredP99ExactEdge(t *testing.T) {
	t0 := time.Unix(100, 0)
	for _, tt := range []struct {
		unit     time.Duration
		one, two int
		p99      float64
	}{
		{time.Millisecond, 15939, 161, 1},
		{time.Nanosecond, 30393, 307, 1},
		{time.Nanosecond, 30393, 308, 2},
	} {
		a := NewAccumulator(Target{})
		whole := time.Duration(tt.one+tt.two) * tt.unit
		a.addSample(&backends.Sample{Start: t0, End: whole})
		a.addSample(&backends.Sample{Start: t0.Add(time.Duration(tt.one) * tt.unit), End: time.Duration(tt.two) * tt.unit})
		d := a.Summary(Window{}).Delivered
		mean := float64(tt.one+2*tt.two) / float64(tt.one+tt.two)
		if d.InFlightP99 != tt.p99 || !near(d.InFlightMean, mean) || d.InFlightMax != 2 {
			t.Errorf("%d × %v at 1, %d at 2: p99 %v, mean %v, max %v; want %v, %v, 2", tt.one, tt.unit, tt.two,
				d.InFlightP99, d.InFlightMean, d.InFlightMax, tt.p99, mean)
		}
	}
}

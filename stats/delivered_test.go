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
		a.Add(s)
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
	b.Add(req(1000, 1100))
	r := SummarizeRuns([]MeasuredRun{{Acc: a}, {Acc: b}}, Target{Concurrency: 2})
	if p := r.Pooled.Delivered; !near(p.InFlightMean, (180+100)/200.0) || p.InFlightMax != 2 || !near(p.InFlightHeld, 2) ||
		!near(p.RampSeconds, 0.01) {
		t.Fatalf("pooled in flight mean %v, max %v, held %v, ramp %v; want 1.4, 2, 2, 0.01", p.InFlightMean, p.InFlightMax, p.InFlightHeld, p.RampSeconds)
	}
}

// A slot that starts its next request the instant its last one ended has one in flight
// there, not two, whichever of the two requests is added first.
func TestDeliveredBackToBack(t *testing.T) {
	t0 := time.Unix(100, 0)
	later := &backends.Sample{Start: t0.Add(50 * time.Millisecond), End: 50 * time.Millisecond, OutputTokens: 1}
	first := &backends.Sample{Start: t0, End: 50 * time.Millisecond, OutputTokens: 1}
	for _, order := range [][]*backends.Sample{{first, later}, {later, first}} {
		a := NewAccumulator(Target{Concurrency: 1})
		for _, s := range order {
			a.Add(s)
		}
		d := a.Summary(Window{}).Delivered
		if d.InFlightMax != 1 || d.InFlightP99 != 1 || !near(d.InFlightMean, 1) || !near(d.InFlightHeld, 1) {
			t.Fatalf("added %v then %v: in flight max %v, p99 %v, mean %v, held %v; want 1 throughout",
				order[0].Start.Sub(t0), order[1].Start.Sub(t0), d.InFlightMax, d.InFlightP99, d.InFlightMean, d.InFlightHeld)
		}
	}
}

// Paced requests: the schedule's own rate and the start stamps' rate.
func TestDeliveredRate(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := NewAccumulator(Target{})
	// Due every 10 ms from 30 ms (100/s; the first due is not the run's start); sent
	// every 20 ms (50/s).
	for i := range 5 {
		s := &backends.Sample{Start: t0.Add(time.Duration(20*i) * time.Millisecond), End: time.Millisecond}
		a.Add(s)
		a.AddPaced(time.Duration(30+10*i)*time.Millisecond, s)
	}
	d := a.Summary(Window{}).Delivered
	if !near(d.RateScheduled, 100) || !near(d.RateDelivered, 50) {
		t.Fatalf("rates %v scheduled, %v delivered; want 100, 50", d.RateScheduled, d.RateDelivered)
	}
	if !math.IsNaN(d.InFlightHeld) || !math.IsNaN(d.RampSeconds) {
		t.Fatalf("held %v, ramp %v without a closed loop's slots", d.InFlightHeld, d.RampSeconds)
	}
}

// Figures with nothing to divide by are not measured (NaN), not infinite or zero: two
// paced requests due at one instant (a trace's burst) have no schedule rate, and a
// level whose only request took no time has no time in flight to average.
func TestDeliveredWithoutTime(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := NewAccumulator(Target{})
	for i := range 2 {
		s := &backends.Sample{Start: t0.Add(time.Duration(i) * time.Millisecond), End: time.Millisecond}
		a.Add(s)
		a.AddPaced(5*time.Millisecond, s)
	}
	if d := a.Summary(Window{}).Delivered; !math.IsNaN(d.RateScheduled) || !near(d.RateDelivered, 1000) {
		t.Errorf("a burst: rates %v scheduled, %v delivered; want NaN, 1000", d.RateScheduled, d.RateDelivered)
	}
	b := NewAccumulator(Target{})
	b.Add(&backends.Sample{Start: t0})
	if d := b.Summary(Window{}).Delivered; !math.IsNaN(d.InFlightMean) || !math.IsNaN(d.InFlightP99) || d.InFlightMax != 0 {
		t.Errorf("no time in flight: mean %v, p99 %v, max %v; want NaN, NaN, 0", d.InFlightMean, d.InFlightP99, d.InFlightMax)
	}
}

// The p99 in flight is the count at or under which 99% of the window's time was spent:
// exactly 99% at 1 in flight (99 ms of 100) gives 1, not the 2 of the last 1 ms.
func TestDeliveredP99AtTheBoundary(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := NewAccumulator(Target{})
	a.Add(&backends.Sample{Start: t0, End: 100 * time.Millisecond})
	a.Add(&backends.Sample{Start: t0.Add(99 * time.Millisecond), End: time.Millisecond})
	if d := a.Summary(Window{}).Delivered; d.InFlightP99 != 1 || d.InFlightMax != 2 || !near(d.InFlightMean, 1.01) {
		t.Errorf("p99 %v, max %v, mean %v; want 1, 2, 1.01", d.InFlightP99, d.InFlightMax, d.InFlightMean)
	}
}

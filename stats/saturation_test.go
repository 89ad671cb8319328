package stats

import (
	"math"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

func TestSlopeInterval(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4}
	if b, lo, hi := slopeInterval(x, []float64{1, 3, 5, 7, 9}); !near(b, 2) || !near(lo, 2) || !near(hi, 2) {
		t.Errorf("exact line: slope %v [%v, %v], want 2 [2, 2]", b, lo, hi)
	}
	// y = 1, 2, 1, 2, 1: slope 0 with residuals; by hand sxx = 10, sxy = 0, sse = 1.2,
	// se = √(1.2/3/10) = 0.2, t(3, 0.975) = 3.182.
	if b, lo, hi := slopeInterval(x, []float64{1, 2, 1, 2, 1}); !near(b, 0) || math.Abs(hi-0.2*3.182446) > 1e-5 || !near(lo, -hi) {
		t.Errorf("flat: slope %v [%v, %v], want 0 ± 0.6365", b, lo, hi)
	}
	if b, _, _ := slopeInterval(x[:2], []float64{1, 2}); !math.IsNaN(b) {
		t.Errorf("two points gave a slope %v", b)
	}
}

// An open loop whose TTFT climbs with time as its requests in flight grow (its queue
// grows) is over-saturated; one whose TTFT only jitters about a level is not, nor is one
// whose climb is within the margin, nor one whose TTFT climbs at a steady number in flight.
func TestSaturation(t *testing.T) {
	t0 := time.Unix(100, 0)
	run := func(ttft func(i int, at float64) float64) *Saturation {
		a := NewAccumulator(Target{})
		for i := range 200 { // every 10 ms for 2 s
			at := float64(i) * 0.01
			first := time.Duration(ttft(i, at) * 1e9)
			s := &backends.Sample{Start: t0.Add(time.Duration(at * 1e9)), FirstToken: first, End: first + 50*time.Millisecond,
				OutputTokens: 10, Chunks: 10, TokenSource: backends.TokensUsage}
			a.Add(executor.Event{Sample: s, Paced: true, Scheduled: time.Duration(at * 1e9)})
		}
		return a.Summary(Window{}).Delivered.Saturation
	}
	tests := []struct {
		name string
		ttft func(i int, at float64) float64
		over bool
	}{
		{"steady", func(i int, _ float64) float64 { return 0.05 + 0.01*float64(i%3) }, false},
		{"queue grows: TTFT +0.5 s a second", func(_ int, at float64) float64 { return 0.05 + 0.5*at }, true},
		{"a slight drift within the margin", func(_ int, at float64) float64 { return 0.1 + 0.01*at }, false},
	}
	// TTFT climbing while each request still ends 0.5 s after its start: after the first
	// half second, the same number in flight throughout (a slower prefill, not a growing
	// queue). Ten seconds, so the pipeline's filling is a small part of the span.
	slower := run2(t0, func(at float64) (time.Duration, time.Duration) {
		return time.Duration((0.05 + 0.04*at) * 1e9), 500 * time.Millisecond
	})
	if slower == nil || slower.Over || slower.TTFTSlopeLo <= 0 {
		t.Errorf("TTFT climbing at a steady number in flight: %+v, want a TTFT slope above zero and not over-saturated", slower)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(tt.ttft)
			if s == nil || s.Over != tt.over {
				t.Fatalf("saturation %+v, want over %v", s, tt.over)
			}
		})
	}
	closed := NewAccumulator(Target{Concurrency: 1})
	closed.addSample(&backends.Sample{Start: t0, FirstToken: time.Millisecond, End: time.Second, OutputTokens: 2})
	if s := closed.Summary(Window{}).Delivered.Saturation; s != nil {
		t.Errorf("a closed loop has a saturation test %+v", s)
	}
}

// run2 is a paced run of 1000 requests every 10 ms whose first token and end (after
// the start) are at(start seconds).
func run2(t0 time.Time, at func(float64) (first, end time.Duration)) *Saturation {
	a := NewAccumulator(Target{})
	for i := range 1000 {
		s0 := float64(i) * 0.01
		first, end := at(s0)
		s := &backends.Sample{Start: t0.Add(time.Duration(s0 * 1e9)), FirstToken: first, End: end,
			OutputTokens: 10, Chunks: 10, TokenSource: backends.TokensUsage}
		a.Add(executor.Event{Sample: s, Paced: true, Scheduled: time.Duration(s0 * 1e9)})
	}
	return a.Summary(Window{}).Delivered.Saturation
}

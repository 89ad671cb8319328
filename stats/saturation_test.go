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

// An open loop whose TTFT climbs with time (its queue grows) is over-saturated; one whose
// TTFT only jitters about a level is not, nor is one whose climb is within the margin.
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

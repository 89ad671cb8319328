package stats

import (
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
)

// The samples of TestSummarizeExact, held against SLOs whose limits fall between their
// figures, so each limit decides a known set of requests.
func sloSamples() []backends.Sample {
	return []backends.Sample{
		ok(0, 5, backends.TokensUsage, 100, 200, 300, 500), // TTFT .1 TPOT .1 max gap .2 E2E .5
		ok(100, 3, backends.TokensUsage, 300, 400),         // TTFT .3 TPOT .05 max gap .1 E2E .4
		ok(200, 1, backends.TokensUsage, 250),              // TTFT .25, one token: no TPOT, no gap, E2E .25
		failed(300, 1800, backends.ErrTimeout),             // window 0 → 2.1 s
	}
}

func TestSLOAttainmentAndGoodput(t *testing.T) {
	tests := []struct {
		name      string
		slo       SLO
		good      int // requests meeting every limit
		goodToks  int
		attainPct float64
	}{
		{"ttft", SLO{TTFT: ms(260)}, 2, 6, 50},                      // a, c
		{"tpot", SLO{TPOT: ms(60)}, 2, 4, 50},                       // b, and c without a TPOT
		{"itl", SLO{ITL: ms(150)}, 2, 4, 50},                        // b, and c without a gap
		{"e2e", SLO{E2E: ms(450)}, 2, 4, 50},                        // b, c
		{"every limit", SLO{TTFT: ms(260), E2E: ms(450)}, 1, 1, 25}, // c only
		{"loose", SLO{TTFT: ms(1000), TPOT: ms(1000), ITL: ms(1000), E2E: ms(1000)}, 3, 9, 75},
		{"tight", SLO{TTFT: ms(1)}, 0, 0, 0},
		// A figure equal to its limit meets it.
		{"ttft at the limit", SLO{TTFT: ms(250)}, 2, 6, 50}, // a, c
		{"tpot at the limit", SLO{TPOT: ms(50)}, 2, 4, 50},  // b, c
		{"itl at the limit", SLO{ITL: ms(100)}, 2, 4, 50},   // b, c
		{"e2e at the limit", SLO{E2E: ms(400)}, 2, 4, 50},   // b, c
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Summarize(sloSamples(), Window{}, Target{SLO: tt.slo})
			if l.GoodRequests != tt.good || l.GoodOutputTokens != tt.goodToks {
				t.Errorf("good = %d requests, %d tokens; want %d, %d", l.GoodRequests, l.GoodOutputTokens, tt.good, tt.goodToks)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"attainment", l.SLOAttainment * 100, tt.attainPct},
				{"goodput req/s", l.GoodputReqS, float64(tt.good) / 2.1},
				{"goodput tok/s", l.GoodputTokS, float64(tt.goodToks) / 2.1},
			} {
				if !near(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestNoSLOLeavesFiguresUnmeasured(t *testing.T) {
	l := Summarize(sloSamples(), Window{}, Target{})
	if !math.IsNaN(l.SLOAttainment) || !math.IsNaN(l.GoodputReqS) || !math.IsNaN(l.GoodputTokS) || l.GoodRequests != 0 {
		t.Errorf("without an SLO: attainment %v goodput %v %v good %d, want NaN and 0",
			l.SLOAttainment, l.GoodputReqS, l.GoodputTokS, l.GoodRequests)
	}
}

// Pooled attainment is over every request of every run; goodput is per run, then the
// median across runs like every rate.
func TestSLOPooledAcrossRuns(t *testing.T) {
	tgt := Target{SLO: SLO{TTFT: ms(260)}}
	s := sloSamples()
	runs := []MeasuredRun{
		{Samples: s[:2]}, // a good, b not: window 0..0.5
		{Samples: s[2:]}, // c good, the timeout not: window 0.2..2.1
		{Samples: []backends.Sample{ok(0, 2, backends.TokensUsage, 100, 200)}}, // good: window 0.2
	}
	r := SummarizeRuns(runs, tgt)
	if r.Pooled.GoodRequests != 3 || r.Pooled.Requests != 5 {
		t.Fatalf("pooled good %d of %d, want 3 of 5", r.Pooled.GoodRequests, r.Pooled.Requests)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"pooled attainment", r.Pooled.SLOAttainment, 0.6},
		{"pooled goodput", r.Pooled.GoodputReqS, 3 / (0.5 + 1.9 + 0.2)},
		{"median attainment", r.Median.SLOAttainment, 0.5},
		{"median goodput req/s", r.Median.GoodputReqS, 2},  // runs: 2, 1/1.9, 5
		{"median goodput tok/s", r.Median.GoodputTokS, 10}, // runs: 5/0.5, 1/1.9, 2/0.2
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDistP95AndStd(t *testing.T) {
	d := NewDist([]float64{4, 1, 3, 2})
	if !near(d.P95, 3.85) || !near(d.Std, math.Sqrt(1.25)) {
		t.Errorf("p95 %v std %v, want 3.85 and √1.25 (numpy.percentile, numpy.std)", d.P95, d.Std)
	}
	if v, ok := d.At(95); !ok || v != d.P95 {
		t.Errorf("At(95) = %v, %v", v, ok)
	}
	if _, ok := d.At(75); ok {
		t.Error("At(75) answered a percentile the Dist does not hold")
	}
}

// Past its exact limit the ITL store keeps Std exact and gives p95 from the sketch.
func TestITLSketchP95AndStd(t *testing.T) {
	s := &valueStore{limit: 2}
	for _, v := range []float64{4, 1, 3, 2} {
		s.add(v)
	}
	d := s.dist()
	if s.sketch == nil || !near(d.Std, math.Sqrt(1.25)) || math.Abs(d.P95-3) > 3*ITLRelativeError {
		t.Errorf("sketched: p95 %v std %v, want ≈3 (the sketch takes rank ⌊0.95·(n−1)⌋) and √1.25", d.P95, d.Std)
	}
}

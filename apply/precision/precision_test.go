package precision

import (
	"strings"
	"testing"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// summaryOf is a run's figures whose TTFT p50 is 1 s with an interval ±half around it.
func summaryOf(half float64) stats.Summary {
	var s stats.Summary
	s.TTFT = stats.Dist{N: 100, P50: 1, CI: &stats.DistCI{P50: stats.Interval{Lo: 1 - half, Hi: 1 + half}}}
	return s
}

// A run's Enough closes at the first batch whose figures are within the asked
// half-width with the margin to spare, and not before a batch is complete; the note
// says where it was reached.
func TestWatchStopsARunOncePrecise(t *testing.T) {
	p := &plan.Precision{Targets: []plan.PrecisionTarget{{Figure: "ttft_p50", Dist: "ttft", Percentile: 50, HalfWidth: 0.05}},
		MaxRequests: 1000}
	tests := []struct {
		name   string
		halves []float64 // the run's half-width at each look (a batch of 4)
		closed int       // measured requests when Enough closed; 0: never
	}{
		{"precise at the first look", []float64{0.01}, 4},
		{"precise at the third", []float64{0.2, 0.06, 0.04}, 12},
		{"at the half-width itself: not within the margin", []float64{0.05, 0.05}, 0},
		{"never precise", []float64{0.5, 0.4}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			look := 0
			w := NewWatch(p, 4, 2, func(run int) (stats.Summary, bool) {
				s := summaryOf(tt.halves[min(look, len(tt.halves)-1)])
				look++
				return s, true
			})
			defer w.Stop()
			enough := w.Enough(0)
			closed := 0
			for n := 1; n <= 4*len(tt.halves) && closed == 0; n++ {
				w.Add(0)
				select {
				case <-enough:
					closed = n
				default:
				}
			}
			if closed != tt.closed {
				t.Fatalf("Enough closed after %d requests, want %d", closed, tt.closed)
			}
			note := w.Note(summaryOf(0.01), false)
			if reached := strings.Contains(note, ": reached in the run, after"); reached != (tt.closed > 0) {
				t.Errorf("note %q: reached %v, want %v", note, reached, tt.closed > 0)
			}
		})
	}
}

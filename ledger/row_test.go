package ledger

import (
	"maps"
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/stats"
)

// SetStats copies the failures by class, writes SLO attainment (a fraction in stats) as
// a percentage, and gives in-flight max and the embeddings figures only to a level that
// has requests and embedded inputs: the others stay NaN (not measured), never 0.
func TestSetStats(t *testing.T) {
	pooled := stats.Summary{Requests: 8, Succeeded: 6, Failed: 2,
		Failures:      map[backends.ErrorClass]int{backends.ErrTimeout: 2},
		SLOAttainment: 0.75, Delivered: stats.Delivered{InFlightMax: 4},
		Inputs: 24, InputTokens: 480}
	median := stats.Summary{InputsPerSec: 12, InputTokS: 240}
	r := NewRow()
	r.SetStats(stats.Runs{PerRun: []stats.Summary{pooled, pooled}, Pooled: pooled, Median: median})
	if want := map[string]int{string(backends.ErrTimeout): 2}; !maps.Equal(r.Failures, want) {
		t.Errorf("Failures = %v, want %v", r.Failures, want)
	}
	if r.Runs != 2 || r.Requests != 8 || r.Failed != 2 {
		t.Errorf("Runs, Requests, Failed = %d, %d, %d; want 2, 8, 2", r.Runs, r.Requests, r.Failed)
	}
	if r.SLOAttainmentPct != 75 {
		t.Errorf("SLOAttainmentPct = %v, want 75 (0.75 as a percentage)", r.SLOAttainmentPct)
	}
	if r.InFlightMax != 4 {
		t.Errorf("InFlightMax = %v, want 4", r.InFlightMax)
	}
	if r.InputsTotal != 24 || r.InputTokens != 480 || r.InputsPerSec != 12 || r.InputTokS != 240 {
		t.Errorf("embeddings figures = %d, %d, %v, %v; want 24, 480, 12, 240", r.InputsTotal, r.InputTokens, r.InputsPerSec, r.InputTokS)
	}

	// A level without requests (and so without inputs).
	r = NewRow()
	r.SetStats(stats.Runs{PerRun: []stats.Summary{{}}})
	if r.Failures != nil {
		t.Errorf("Failures without failures = %v, want nil", r.Failures)
	}
	if !math.IsNaN(r.InFlightMax) {
		t.Errorf("InFlightMax without requests = %v, want NaN", r.InFlightMax)
	}
	if !math.IsNaN(r.InputsPerSec) || !math.IsNaN(r.InputTokS) || r.InputsTotal != 0 {
		t.Errorf("embeddings figures of a level that embedded nothing = %d, %v, %v; want 0, NaN, NaN", r.InputsTotal, r.InputsPerSec, r.InputTokS)
	}
}

package stats

import (
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
)

// The shared prefix share is Σ shared tokens / Σ server-counted prompt tokens, over the
// same successful requests, pooled across runs.
func TestSharedPrefixPct(t *testing.T) {
	run := func(shared ...int) MeasuredRun {
		acc := NewAccumulator(Target{})
		for i, n := range shared {
			s := ok(i, 2, backends.TokensUsage, 10, 20)
			s.PromptTokens = 100
			acc.addSample(&s)
			acc.addSharedPrefix(&s, n)
		}
		f := failed(5, 9, backends.ErrServer) // its prompt was never counted: nor is its share
		acc.addSample(&f)
		acc.addSharedPrefix(&f, 100)
		return MeasuredRun{Acc: acc}
	}
	r := SummarizeRuns([]MeasuredRun{run(0, 50, 50, 50), run(0, 0)}, Target{})
	if got := r.PerRun[0].SharedPrefixPct; math.Abs(got-37.5) > 1e-9 {
		t.Errorf("run 0 share = %v%%, want 150/400 = 37.5%%", got)
	}
	if p := r.Pooled; p.SharedPrefixTokens != 150 || math.Abs(p.SharedPrefixPct-25) > 1e-9 {
		t.Errorf("pooled %d tokens, %v%%; want 150 of 600 = 25%%", p.SharedPrefixTokens, p.SharedPrefixPct)
	}
	if got := NewAccumulator(Target{}).Summary(Window{}).SharedPrefixPct; !math.IsNaN(got) {
		t.Errorf("no prompt counted: share %v, want NaN (not measured)", got)
	}
}

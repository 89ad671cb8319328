package capacity

import (
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// The search over rates, from recorded rows: bounds are the highest rate that met the
// target and the lowest above it that missed, whatever noise lies below.
func TestCapacitySearchOverRates(t *testing.T) {
	w := &plan.Workload{Name: "w", Concurrency: []int{64}, RequestRates: []float64{1, 4, 16},
		Capacity: &plan.Capacity{TargetPct: 90, Resolution: 0.5}}
	cell := &plan.Cell{ID: "c", Workload: w}
	row := func(rate, attainmentPct float64) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Concurrency, r.RequestRate, r.SLOAttainmentPct, r.Status = "c", 64, rate, attainmentPct, ledger.StatusOK
		return r
	}
	rows := []ledger.Row{row(1, 100), row(4, 95), row(16, 50), row(10, 89), row(7, 90), row(2, 80)}
	s := New(cell, rows)
	if next, more := s.Next(); !more || next != (plan.LoadLevel{Concurrency: 64, RequestRate: 8.5}) {
		t.Fatalf("next = %+v, %v; want rate 8.5 between 7 (met) and 10 (missed)", next, more)
	}
	s.Judge(plan.LoadLevel{Concurrency: 64, RequestRate: 8.5}, row(8.5, 70))
	s.Judge(plan.LoadLevel{Concurrency: 64, RequestRate: 7.75}, row(7.75, 92))
	if next, more := s.Next(); !more || next.RequestRate != 8.125 {
		t.Fatalf("next = %+v, %v; want 8.125: 7.75 and 8.5 are more than the resolution apart", next, more)
	}
	s.Judge(plan.LoadLevel{Concurrency: 64, RequestRate: 8.125}, row(8.125, 60))
	if next, more := s.Next(); more {
		t.Fatalf("next = %+v after 7.75 met and 8.125 missed, want the search done (resolution 0.5)", next)
	}
	c := s.Answer()
	if c == nil || c.Value != 7.75 || c.Bound != ledger.CapacityFound || c.Dimension != "request_rate" || c.Levels != 9 {
		t.Fatalf("answer %+v, want request_rate 7.75 found over 9 levels", c)
	}
	if none := New(cell, []ledger.Row{row(1, 20)}).Answer(); none.Bound != ledger.CapacityBelow || none.Value != 1 {
		t.Errorf("first level missed: %+v, want below 1", none)
	}
	if all := New(cell, rows[:2]).Answer(); all.Bound != ledger.CapacityAtLeast || all.Value != 4 {
		t.Errorf("every level met: %+v, want at least 4", all)
	}
}

// rateSearch is a cell searching request rates 1, 8 and 16 at concurrency 64 for 90%
// attainment to a resolution of 1, and its rows: a rate's attainment and fidelity.
func rateSearch() (*plan.Cell, func(rate, attainmentPct float64, fidelity string) ledger.Row) {
	w := &plan.Workload{Name: "w", Concurrency: []int{64}, RequestRates: []float64{1, 8, 16},
		Capacity: &plan.Capacity{TargetPct: 90, Resolution: 1}}
	return &plan.Cell{ID: "c", Workload: w}, func(rate, attainmentPct float64, fidelity string) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Concurrency, r.RequestRate, r.SLOAttainmentPct, r.Status = "c", 64, rate, attainmentPct, ledger.StatusOK
		r.Fidelity = fidelity
		return r
	}
}

// A level the client limited neither meets nor misses the target: the search looks
// below it, and its answer names where the client gave out instead of a capacity.
func TestCapacitySearchNeverReportsAClientBoundCapacity(t *testing.T) {
	cell, row := rateSearch()
	// 8/s met the target, but only because the client sent less: it must not count.
	s := New(cell, []ledger.Row{row(1, 100, ledger.FidelityOK), row(8, 100, ledger.FidelityClientBound),
		row(16, 20, ledger.FidelityClientBound)})
	next, more := s.Next()
	if !more || next.RequestRate != 4.5 {
		t.Fatalf("next = %+v, %v; want 4.5, between 1 (met) and the client-bound 8", next, more)
	}
	for _, r := range []ledger.Row{row(4.5, 95, ledger.FidelityOK), row(6.25, 96, ledger.FidelityClientBound),
		row(5.375, 97, ledger.FidelityOK)} {
		s.Judge(plan.LoadLevel{Concurrency: 64, RequestRate: r.RequestRate}, r)
	}
	if next, more := s.Next(); more {
		t.Fatalf("next = %+v after the bounds came within the resolution", next)
	}
	c := s.Answer()
	if c == nil || c.Bound != ledger.CapacityClientBound || c.ClientBoundAt != 6.25 || c.Value != 5.375 {
		t.Fatalf("answer %+v, want client-bound at 6.25 with 5.375 met", c)
	}
	if str := c.String(); !strings.Contains(str, "the client, not the server, was the limit at request_rate 6.25") {
		t.Fatalf("answer says %q", str)
	}
	// A level that missed the target below the client's limit is a server's capacity.
	s.Judge(plan.LoadLevel{Concurrency: 64, RequestRate: 6}, row(6, 10, ledger.FidelityOK))
	if c := s.Answer(); c.Bound != ledger.CapacityFound || c.Value != 5.375 {
		t.Fatalf("answer %+v, want 5.375 found below the missed 6", c)
	}
}

// A late level decides nothing either: whether it met the target or missed it, the
// search looks below it, and the answer says the client could not keep the timing there.
func TestCapacitySearchLateLevelDecidesNothing(t *testing.T) {
	cell, row := rateSearch()
	// 8/s missed the target, but late: it cannot say the server gave out there.
	s := New(cell, []ledger.Row{row(1, 100, ledger.FidelityOK), row(8, 20, ledger.FidelityLate),
		row(16, 20, ledger.FidelityOK)})
	next, more := s.Next()
	if !more || next.RequestRate != 4.5 {
		t.Fatalf("next = %+v, %v; want 4.5, between 1 (met) and the late 8", next, more)
	}
	for _, r := range []ledger.Row{row(4.5, 95, ledger.FidelityOK), row(6.25, 96, ledger.FidelityLate),
		row(5.375, 97, ledger.FidelityOK)} {
		s.Judge(plan.LoadLevel{Concurrency: 64, RequestRate: r.RequestRate}, r)
	}
	c := s.Answer()
	if c == nil || c.Bound != ledger.CapacityClientBound || c.ClientBoundAt != 6.25 || c.Value != 5.375 || c.ClientFidelity != ledger.FidelityLate {
		t.Fatalf("answer %+v, want late at 6.25 with 5.375 met", c)
	}
	if str := c.String(); !strings.Contains(str, "could not keep the load's timing at request_rate 6.25 (fidelity late") {
		t.Fatalf("answer says %q", str)
	}
}

// A level whose attainment interval straddles the target is undecided: the search
// bisects on the points as before, and the answer is also given as the range the
// levels' intervals leave, between the highest level surely met and the lowest surely
// missed.
func TestCapacityAnswerIsARangeWhereLevelsAreUndecided(t *testing.T) {
	w := &plan.Workload{Name: "w", Concurrency: []int{1, 8, 16}, Capacity: &plan.Capacity{TargetPct: 90, Resolution: 8}}
	cell := &plan.Cell{ID: "c", Workload: w}
	row := func(c int, good, n int) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Concurrency, r.Status, r.Requests, r.Succeeded = "c", c, ledger.StatusOK, n, n
		r.SLOAttainmentPct = 100 * float64(good) / float64(n)
		r.CI.Confidence, r.CI.SLOAttainmentPct = 0.95, stats.ProportionInterval(good, n, 0.95).Scale(100)
		return r
	}
	// 1: 400 of 400 good (97.8–100%); 8: 186 of 200 (88.5–96.1%, straddles 90); 16: 100 of 200.
	s := New(cell, []ledger.Row{row(1, 400, 400), row(8, 186, 200), row(16, 100, 200)})
	c := s.Answer()
	if c == nil || c.Value != 8 || c.Bound != ledger.CapacityFound || !slices.Equal(c.Undecided, []float64{8}) || c.RangeLo != 1 || c.RangeHi != 16 {
		t.Fatalf("answer %+v, want 8 found, 8 undecided, the range 1 to 16", c)
	}
	if str := c.String(); !strings.Contains(str, "undecided at concurrency 8 (the attainment interval straddles 90%): as a range, between 1 (the highest level surely met) and 16 (the lowest surely missed)") {
		t.Errorf("String %q", str)
	}
	// Every level decided: no range.
	if c := New(cell, []ledger.Row{row(1, 400, 400), row(8, 400, 400), row(16, 100, 200)}).Answer(); len(c.Undecided) != 0 || c.RangeLo != 0 || strings.Contains(c.String(), "range") {
		t.Errorf("decided levels: %+v %q", c, c.String())
	}
}

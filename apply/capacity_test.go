package apply

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The mock's TTFT is 50 ms and a loaded machine only adds delay, so a 10 ms limit is
// missed by every request and a 5 s limit met by every one.
const sloPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "tight" {
  max_tokens  = 8
  concurrency = 2
  warmup_runs = 0
  repeat_runs = 2
  slo {
    ttft_s = 0.01
  }
}
workload "loose" {
  max_tokens  = 8
  concurrency = 2
  warmup_runs = 0
  repeat_runs = 2
  slo {
    ttft_s  = 5
    tpot_ms = 1000
    e2e_s   = 10
  }
  goal = result.slo_attainment_pct >= 99 && result.goodput_tok_s > 0
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.tight, workload.loose]
  model_id = "mock"
}
`

func TestSLOAttainmentAgainstMock(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 50 * time.Millisecond, TPOT: 2 * time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, sloPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("rows = %d, want 2", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Requests != 4 || r.Succeeded != 4 {
			t.Fatalf("%s: %d/%d ok", r.Workload, r.Succeeded, r.Requests)
		}
		switch r.Workload {
		case "tight":
			if r.SLOAttainmentPct != 0 || r.GoodputReqS != 0 || r.GoodputTokS != 0 {
				t.Errorf("tight: attainment %v goodput %v req/s %v tok/s, want 0", r.SLOAttainmentPct, r.GoodputReqS, r.GoodputTokS)
			}
		case "loose":
			// Every request is good, so goodput is the level's own throughput.
			if r.SLOAttainmentPct != 100 || r.GoodputReqS != r.RequestsPerSec || r.GoodputTokS != r.OutputTokS {
				t.Errorf("loose: attainment %v goodput %v req/s %v tok/s, want 100, %v, %v",
					r.SLOAttainmentPct, r.GoodputReqS, r.GoodputTokS, r.RequestsPerSec, r.OutputTokS)
			}
			if r.Goal != ledger.GoalMet {
				t.Errorf("loose: goal %q (%s), want met", r.Goal, r.Notes)
			}
		}
	}
	rows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if want := map[string]float64{"tight": 0, "loose": 100}[r.Workload]; r.SLOAttainmentPct != want {
			t.Errorf("ledger %s: attainment %v, want %v", r.Workload, r.SLOAttainmentPct, want)
		}
	}
}

// With 3 queue slots a request beyond the third waits for a whole earlier request
// (≥ 20 + 9·20 ms) before its first token, far past the 100 ms limit, while the first
// three meet it: attainment is 100% up to concurrency 3 and 3/c above, so the search
// over [1, 2, 8] at 95% must bisect to exactly 3 (measuring 5, 3, 4). Its
// fidelity_lag_ms is lenient: a late level decides nothing, and a loaded 2-core machine
// stalls a slot for ms at times; the search is what this plan tests.
const capacityPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  max_tokens  = 10
  concurrency = [1, 2, 8]
  warmup_runs = 0
  repeat_runs = 1
  fidelity_lag_ms = 1000
  slo {
    ttft_s = 0.1
  }
  capacity {
    target_attainment_pct = 95
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
output "markdown" {
  path        = "report.md"
  percentiles = [50, 95]
}
`

func TestCapacitySearchBisects(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 20 * time.Millisecond, QueueSlots: 3}))
	defer srv.Close()
	p, cells := loadPlan(t, capacityPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	var measured []int
	for _, r := range res.Rows {
		measured = append(measured, r.Concurrency)
	}
	slices.Sort(measured)
	if !slices.Equal(measured, []int{1, 2, 3, 4, 5, 8}) {
		t.Errorf("levels measured %v, want the declared 1, 2, 8 and the bisection's 5, 3, 4", measured)
	}
	c := res.Cells[0].Capacity
	if c == nil || c.Value != 3 || c.Bound != ledger.CapacityFound || c.Dimension != "concurrency" || c.Levels != 6 {
		t.Fatalf("capacity = %+v, want concurrency 3 found over 6 levels", c)
	}
	md, err := os.ReadFile(p.Outputs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"concurrency 3 at ≥ 95% SLO attainment", "TTFT p95 (s)", "Attainment (%)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown report lacks %q", want)
		}
	}
	if strings.Contains(string(md), "TTFT p90 (s)") {
		t.Error("the Markdown report shows p90, which the output's percentiles leave out")
	}
}

// stopAfterLevels interrupts the run once n levels have ended.
type stopAfterLevels struct {
	countingProgress
	n      int64
	cancel func()
}

func (s *stopAfterLevels) EndLevel(c *plan.Cell, r ledger.Row) {
	if s.levels.Add(1) == s.n {
		s.cancel()
	}
}

// Interrupted after the declared levels and the first bisection step (1, 2, 8, 5), a
// resumed run measures only what the search still needs (3, 4) and gives the same
// answer; resuming the finished run measures nothing and still answers.
func TestCapacitySearchResumes(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 20 * time.Millisecond, QueueSlots: 3}))
	defer srv.Close()
	p, cells := loadPlan(t, capacityPlan, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prog := &stopAfterLevels{n: 4, cancel: cancel}
	res, err := Run(ctx, Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Progress: prog})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Cells[0].Status != ledger.StatusInterrupted || res.Cells[0].Capacity != nil {
		t.Fatalf("interrupted run: interrupted %v, cell %+v", res.Interrupted, res.Cells[0])
	}
	for i := 0; i < 2; i++ {
		res2, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Resume: res.RunDir})
		if err != nil {
			t.Fatal(err)
		}
		if c := res2.Cells[0].Capacity; c == nil || c.Value != 3 || c.Levels != 6 {
			t.Fatalf("resume %d: capacity %+v, want concurrency 3 over 6 levels", i+1, c)
		}
	}
	rows, err := ledger.ReadLedger(filepath.Join(res.RunDir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var measured []int
	for _, r := range rows {
		measured = append(measured, r.Concurrency)
	}
	slices.Sort(measured)
	if !slices.Equal(measured, []int{1, 2, 3, 4, 5, 8}) {
		t.Errorf("levels in the run's CSV %v, want each of 1, 2, 3, 4, 5, 8 once", measured)
	}
}

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
	s := newCapacitySearch(cell, rows)
	if next, more := s.next(); !more || next != (plan.LoadLevel{Concurrency: 64, RequestRate: 8.5}) {
		t.Fatalf("next = %+v, %v; want rate 8.5 between 7 (met) and 10 (missed)", next, more)
	}
	s.judge(plan.LoadLevel{Concurrency: 64, RequestRate: 8.5}, row(8.5, 70))
	s.judge(plan.LoadLevel{Concurrency: 64, RequestRate: 7.75}, row(7.75, 92))
	if next, more := s.next(); !more || next.RequestRate != 8.125 {
		t.Fatalf("next = %+v, %v; want 8.125: 7.75 and 8.5 are more than the resolution apart", next, more)
	}
	s.judge(plan.LoadLevel{Concurrency: 64, RequestRate: 8.125}, row(8.125, 60))
	if next, more := s.next(); more {
		t.Fatalf("next = %+v after 7.75 met and 8.125 missed, want the search done (resolution 0.5)", next)
	}
	c := s.answer()
	if c == nil || c.Value != 7.75 || c.Bound != ledger.CapacityFound || c.Dimension != "request_rate" || c.Levels != 9 {
		t.Fatalf("answer %+v, want request_rate 7.75 found over 9 levels", c)
	}
	if none := newCapacitySearch(cell, []ledger.Row{row(1, 20)}).answer(); none.Bound != ledger.CapacityBelow || none.Value != 1 {
		t.Errorf("first level missed: %+v, want below 1", none)
	}
	if all := newCapacitySearch(cell, rows[:2]).answer(); all.Bound != ledger.CapacityAtLeast || all.Value != 4 {
		t.Errorf("every level met: %+v, want at least 4", all)
	}
}

// A level the client limited neither meets nor misses the target: the search looks
// below it, and its answer names where the client gave out instead of a capacity.
func TestCapacitySearchNeverReportsAClientBoundCapacity(t *testing.T) {
	w := &plan.Workload{Name: "w", Concurrency: []int{64}, RequestRates: []float64{1, 8, 16},
		Capacity: &plan.Capacity{TargetPct: 90, Resolution: 1}}
	cell := &plan.Cell{ID: "c", Workload: w}
	row := func(rate, attainmentPct float64, fidelity string) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Concurrency, r.RequestRate, r.SLOAttainmentPct, r.Status = "c", 64, rate, attainmentPct, ledger.StatusOK
		r.Fidelity = fidelity
		return r
	}
	// 8/s met the target, but only because the client sent less: it must not count.
	s := newCapacitySearch(cell, []ledger.Row{row(1, 100, ledger.FidelityOK), row(8, 100, ledger.FidelityClientBound),
		row(16, 20, ledger.FidelityClientBound)})
	next, more := s.next()
	if !more || next.RequestRate != 4.5 {
		t.Fatalf("next = %+v, %v; want 4.5, between 1 (met) and the client-bound 8", next, more)
	}
	for _, r := range []ledger.Row{row(4.5, 95, ledger.FidelityOK), row(6.25, 96, ledger.FidelityClientBound),
		row(5.375, 97, ledger.FidelityOK)} {
		s.judge(plan.LoadLevel{Concurrency: 64, RequestRate: r.RequestRate}, r)
	}
	if next, more := s.next(); more {
		t.Fatalf("next = %+v after the bounds came within the resolution", next)
	}
	c := s.answer()
	if c == nil || c.Bound != ledger.CapacityClientBound || c.ClientBoundAt != 6.25 || c.Value != 5.375 {
		t.Fatalf("answer %+v, want client-bound at 6.25 with 5.375 met", c)
	}
	if str := c.String(); !strings.Contains(str, "the client, not the server, was the limit at request_rate 6.25") {
		t.Fatalf("answer says %q", str)
	}
	// A level that missed the target below the client's limit is a server's capacity.
	s.judge(plan.LoadLevel{Concurrency: 64, RequestRate: 6}, row(6, 10, ledger.FidelityOK))
	if c := s.answer(); c.Bound != ledger.CapacityFound || c.Value != 5.375 {
		t.Fatalf("answer %+v, want 5.375 found below the missed 6", c)
	}
}

// A late level decides nothing either: whether it met the target or missed it, the
// search looks below it, and the answer says the client could not keep the timing there.
func TestCapacitySearchLateLevelDecidesNothing(t *testing.T) {
	w := &plan.Workload{Name: "w", Concurrency: []int{64}, RequestRates: []float64{1, 8, 16},
		Capacity: &plan.Capacity{TargetPct: 90, Resolution: 1}}
	cell := &plan.Cell{ID: "c", Workload: w}
	row := func(rate, attainmentPct float64, fidelity string) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Concurrency, r.RequestRate, r.SLOAttainmentPct, r.Status = "c", 64, rate, attainmentPct, ledger.StatusOK
		r.Fidelity = fidelity
		return r
	}
	// 8/s missed the target, but late: it cannot say the server gave out there.
	s := newCapacitySearch(cell, []ledger.Row{row(1, 100, ledger.FidelityOK), row(8, 20, ledger.FidelityLate),
		row(16, 20, ledger.FidelityOK)})
	next, more := s.next()
	if !more || next.RequestRate != 4.5 {
		t.Fatalf("next = %+v, %v; want 4.5, between 1 (met) and the late 8", next, more)
	}
	for _, r := range []ledger.Row{row(4.5, 95, ledger.FidelityOK), row(6.25, 96, ledger.FidelityLate),
		row(5.375, 97, ledger.FidelityOK)} {
		s.judge(plan.LoadLevel{Concurrency: 64, RequestRate: r.RequestRate}, r)
	}
	c := s.answer()
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
	s := newCapacitySearch(cell, []ledger.Row{row(1, 400, 400), row(8, 186, 200), row(16, 100, 200)})
	c := s.answer()
	if c == nil || c.Value != 8 || c.Bound != ledger.CapacityFound || !slices.Equal(c.Undecided, []float64{8}) || c.RangeLo != 1 || c.RangeHi != 16 {
		t.Fatalf("answer %+v, want 8 found, 8 undecided, the range 1 to 16", c)
	}
	if str := c.String(); !strings.Contains(str, "undecided at concurrency 8 (the attainment interval straddles 90%): as a range, between 1 (the highest level surely met) and 16 (the lowest surely missed)") {
		t.Errorf("String %q", str)
	}
	// Every level decided: no range.
	if c := newCapacitySearch(cell, []ledger.Row{row(1, 400, 400), row(8, 400, 400), row(16, 100, 200)}).answer(); len(c.Undecided) != 0 || c.RangeLo != 0 || strings.Contains(c.String(), "range") {
		t.Errorf("decided levels: %+v %q", c, c.String())
	}
}

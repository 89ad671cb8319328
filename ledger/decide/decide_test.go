package decide

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/stats"
)

// row is a measured row of cell q (a quantization of one model on one tool) at
// concurrency c: tok/s with its interval across runs, memory, and SLO attainment with
// its interval.
func row(q string, c int, tokS, lo, hi, memGB float64) ledger.Row {
	r := ledger.NewRow()
	r.CellID, r.Model, r.Quantization, r.Tool, r.Hardware, r.Workload = "m/tiny/"+q+"/ollama.x/cpu/w", "tiny", q, "ollama.x", "cpu", "w"
	r.Status, r.Concurrency, r.Succeeded, r.Requests, r.Runs = ledger.StatusOK, c, 40, 40, 8
	r.OutputTokS, r.MemPeakGB, r.MemSource = tokS, memGB, "rss"
	r.CI.Confidence = 0.95
	r.CI.OutputTokS = stats.Interval{Lo: lo, Hi: hi}
	r.SLOAttainmentPct = 100
	r.CI.SLOAttainmentPct = stats.Interval{Lo: 93, Hi: 100}
	return r
}

func names(cs []ledger.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name+" "+c.Level())
	}
	return out
}

func spec(max bool, field string, cons ...ledger.DecisionConstraint) ledger.DecisionSpec {
	return ledger.DecisionSpec{Name: "pick", Objective: ledger.DecisionObjective{Field: field, Maximize: max}, Constraints: cons}
}

func TestDecideOutcomes(t *testing.T) {
	memAtMost := func(gb float64) ledger.DecisionConstraint {
		return ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: gb}
	}
	interrupted := row("q2", 4, 500, 480, 520, 0.1)
	interrupted.Status = ledger.StatusInterrupted
	unmeasured := row("q3", 4, math.NaN(), math.NaN(), math.NaN(), 0.1)
	for _, tc := range []struct {
		name              string
		spec              ledger.DecisionSpec
		rows              []ledger.Row
		outcome           string
		chosen, runnerUp  string // "" for none
		excluded          []string
		needRuns          bool // the outcome says how many runs would settle it
		needUnit          string
		brokenBy          map[string]float64 // excluded name → how far beyond the memory limit
		brokenIndetermine string             // the chosen row's indeterminate constraint
	}{
		{
			name: "sure: apart intervals", spec: spec(true, "output_tok_s", memAtMost(1)),
			rows:    []ledger.Row{row("f16", 4, 60, 55, 65, 0.2), row("q8_0", 4, 100, 95, 105, 0.15), row("q4_K_M", 4, 80, 75, 85, 0.1)},
			outcome: ledger.DecisionSure, chosen: "q8_0 c4", runnerUp: "q4_K_M c4",
		},
		{
			name: "indeterminate: overlapping intervals", spec: spec(true, "output_tok_s"),
			rows:    []ledger.Row{row("q8_0", 4, 100, 90, 110, 0.15), row("q4_K_M", 4, 98, 88, 108, 0.1)},
			outcome: ledger.DecisionIndeterminate, chosen: "q8_0 c4", runnerUp: "q4_K_M c4", needRuns: true, needUnit: "runs",
		},
		{
			name: "indeterminate: unbounded intervals", spec: spec(true, "output_tok_s"),
			rows:    []ledger.Row{row("q8_0", 4, 100, math.NaN(), math.NaN(), 0.15), row("q4_K_M", 4, 50, 45, 55, 0.1)},
			outcome: ledger.DecisionIndeterminate, chosen: "q8_0 c4", runnerUp: "q4_K_M c4", needRuns: true, needUnit: "runs",
		},
		{
			name: "none: every row over the memory limit", spec: spec(true, "output_tok_s", memAtMost(0.05)),
			rows:     []ledger.Row{row("f16", 4, 60, 55, 65, 0.2), row("q4_K_M", 4, 80, 75, 85, 0.1)},
			outcome:  ledger.DecisionNone,
			excluded: []string{"f16 c4", "q4_K_M c4"},
			brokenBy: map[string]float64{"f16 c4": 0.15, "q4_K_M c4": 0.05},
		},
		{
			name: "the memory limit excludes the fastest", spec: spec(true, "output_tok_s", memAtMost(0.12)),
			rows:    []ledger.Row{row("f16", 4, 60, 55, 65, 0.2), row("q8_0", 4, 100, 95, 105, 0.15), row("q4_K_M", 4, 80, 75, 85, 0.1)},
			outcome: ledger.DecisionSure, chosen: "q4_K_M c4", excluded: []string{"f16 c4", "q8_0 c4"},
			brokenBy: map[string]float64{"q8_0 c4": 0.03, "f16 c4": 0.08},
		},
		{
			name: "indeterminate: the chosen row's attainment straddles its floor",
			spec: spec(true, "output_tok_s", ledger.DecisionConstraint{Field: "slo_attainment_pct", Op: ">=", Limit: 95}),
			rows: []ledger.Row{row("q8_0", 4, 100, 95, 105, 0.15), row("q4_K_M", 4, 80, 75, 85, 0.1)},
			// Both rows' attainment interval is 93–100: neither surely meets 95.
			outcome: ledger.DecisionIndeterminate, chosen: "q8_0 c4", runnerUp: "q4_K_M c4", needUnit: "requests",
			brokenIndetermine: "slo_attainment_pct",
		},
		{
			name: "the runner-up is another cell, not the chosen cell's other level", spec: spec(true, "output_tok_s"),
			rows:    []ledger.Row{row("q8_0", 4, 100, 95, 105, 0.15), row("q8_0", 1, 90, 85, 94, 0.15), row("q4_K_M", 4, 80, 75, 85, 0.1)},
			outcome: ledger.DecisionSure, chosen: "q8_0 c4", runnerUp: "q4_K_M c4",
		},
		{
			name: "minimize: lowest TTFT p99", spec: spec(false, "ttft_p99_s"),
			rows: func() []ledger.Row {
				a, b := row("f16", 1, 10, 9, 11, 0.2), row("q4_K_M", 1, 20, 19, 21, 0.1)
				a.TTFT = dist(0.30, 0.28, 0.33)
				b.TTFT = dist(0.20, 0.18, 0.22)
				return []ledger.Row{a, b}
			}(),
			outcome: ledger.DecisionSure, chosen: "q4_K_M c1", runnerUp: "f16 c1",
		},
		{
			name: "rows that did not end ok or lack the figure are excluded", spec: spec(true, "output_tok_s"),
			rows:    []ledger.Row{interrupted, unmeasured, row("q4_K_M", 4, 80, 75, 85, 0.1)},
			outcome: ledger.DecisionSure, chosen: "q4_K_M c4", excluded: []string{"q2 c4", "q3 c4"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.spec, tc.rows)
			if d.Outcome != tc.outcome {
				t.Fatalf("outcome %q (%s), want %q", d.Outcome, d.Reason, tc.outcome)
			}
			got := func(c *ledger.Candidate) string {
				if c == nil {
					return ""
				}
				return c.Name + " " + c.Level()
			}
			if got(d.Chosen) != tc.chosen {
				t.Errorf("chosen %q, want %q", got(d.Chosen), tc.chosen)
			}
			if tc.runnerUp != "" && got(d.RunnerUp) != tc.runnerUp {
				t.Errorf("runner-up %q, want %q", got(d.RunnerUp), tc.runnerUp)
			}
			var excluded []string
			for _, c := range d.Candidates {
				if c.Status == ledger.CandidateExcluded {
					excluded = append(excluded, c.Name+" "+c.Level())
					if len(c.Broken()) == 0 {
						t.Errorf("%s excluded without a reason", c.Name)
					}
					if want, ok := tc.brokenBy[c.Name+" "+c.Level()]; ok {
						b := c.Broken()[0]
						if b.Verdict != ledger.CheckFail || math.Abs(float64(b.By)-want) > 1e-9 {
							t.Errorf("%s: %s by %v, want fail by %v", c.Name, b.Verdict, b.By, want)
						}
					}
				}
			}
			slices.Sort(excluded)
			slices.Sort(tc.excluded)
			if !slices.Equal(excluded, tc.excluded) {
				t.Errorf("excluded %v, want %v", excluded, tc.excluded)
			}
			if tc.needUnit != "" && (d.Need <= 0 || d.NeedUnit != tc.needUnit) {
				t.Errorf("need %d %s, want a count of %s", d.Need, d.NeedUnit, tc.needUnit)
			}
			if tc.needRuns && d.Need <= d.Chosen.Runs {
				t.Errorf("need %d runs, no more than the %d measured", d.Need, d.Chosen.Runs)
			}
			if tc.brokenIndetermine != "" {
				b := d.Chosen.Broken()
				if len(b) != 1 || b[0].Field != tc.brokenIndetermine || b[0].Verdict != ledger.CheckIndeterminate {
					t.Errorf("chosen's unsettled checks %+v, want %s indeterminate", b, tc.brokenIndetermine)
				}
			}
			if tc.outcome != ledger.DecisionNone && d.Chosen.Status == ledger.CandidateExcluded {
				t.Errorf("chose an excluded row")
			}
		})
	}
}

// dist is a distribution whose p99 is p99 with the interval [lo, hi].
func dist(p99, lo, hi float64) stats.Dist {
	d := stats.NewDist([]float64{p99})
	d.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Unbounded(0), P90: stats.Unbounded(0), P95: stats.Unbounded(0),
		P99: stats.Interval{Lo: lo, Hi: hi}, Mean: stats.Unbounded(0)}
	return d
}

// TestDecideSettleCount holds the count an indeterminate decision states to its promise:
// the same two rows measured with that many runs (each interval narrowed as 1/√n around
// the same figures) are told apart.
func TestDecideSettleCount(t *testing.T) {
	for _, tc := range []struct{ a, aw, b, bw float64 }{
		{100, 10, 98, 10}, {100, 4, 95, 8}, {50, 5, 47, 1},
	} {
		a, b := row("q8_0", 4, tc.a, tc.a-tc.aw, tc.a+tc.aw, 0.1), row("q4_K_M", 4, tc.b, tc.b-tc.bw, tc.b+tc.bw, 0.1)
		d := Decide(spec(true, "output_tok_s"), []ledger.Row{a, b})
		if d.Outcome != ledger.DecisionIndeterminate || d.NeedUnit != "runs" {
			t.Fatalf("%v: %s, need %d %s; want indeterminate in runs", tc, d.Outcome, d.Need, d.NeedUnit)
		}
		f := math.Sqrt(float64(a.Runs) / float64(d.Need))
		for _, r := range []*ledger.Row{&a, &b} {
			v := r.OutputTokS
			r.CI.OutputTokS = stats.Interval{Lo: v - (v-r.CI.OutputTokS.Lo)*f, Hi: v + (r.CI.OutputTokS.Hi-v)*f}
			r.Runs = d.Need
		}
		if again := Decide(spec(true, "output_tok_s"), []ledger.Row{a, b}); again.Outcome != ledger.DecisionSure {
			t.Errorf("%v: with the %d runs it asked for, still %s (%s)", tc, d.Need, again.Outcome, again.Reason)
		}
		// One run short of a tenth of it must not settle it: the count is not just "more".
		f = math.Sqrt(float64(d.Need) / float64(max(d.Need/10, 1)))
		for _, r := range []*ledger.Row{&a, &b} {
			v := r.OutputTokS
			r.CI.OutputTokS = stats.Interval{Lo: v - (v-r.CI.OutputTokS.Lo)*f, Hi: v + (r.CI.OutputTokS.Hi-v)*f}
		}
		if again := Decide(spec(true, "output_tok_s"), []ledger.Row{a, b}); again.Outcome != ledger.DecisionIndeterminate {
			t.Errorf("%v: a tenth of the %d runs it asked for settled it", tc, d.Need)
		}
	}
}

// TestDecideQualityFloor is a quality floor on a field the ledger does not have yet,
// added to the result table as another helper's quality phase will add it: the decision
// reads it, and its interval, by name.
func TestDecideQualityFloor(t *testing.T) {
	quality := map[string][3]float64{ // cell → same-top-1 %, lo, hi
		"m/tiny/f16/ollama.x/cpu/w":    {100, 97, 100},
		"m/tiny/q8_0/ollama.x/cpu/w":   {96.5, 95.5, 97.5},
		"m/tiny/q4_K_M/ollama.x/cpu/w": {60, 52, 68},
	}
	num := func(name string, i int) ledger.ResultField {
		return ledger.ResultField{Name: name, Type: cty.Number, Unit: "%", Value: func(r *ledger.Row) cty.Value {
			q, ok := quality[r.CellID]
			if !ok {
				return cty.NullVal(cty.Number)
			}
			return cty.NumberFloatVal(q[i])
		}}
	}
	saved := ledger.ResultFields
	t.Cleanup(func() { ledger.ResultFields = saved })
	ledger.ResultFields = append(slices.Clip(saved), num("same_top1_pct", 0), num("same_top1_pct_lo", 1), num("same_top1_pct_hi", 2))

	rows := []ledger.Row{row("f16", 4, 60, 55, 65, 0.2), row("q8_0", 4, 100, 95, 105, 0.15), row("q4_K_M", 4, 130, 125, 135, 0.1)}
	d := Decide(spec(true, "output_tok_s", ledger.DecisionConstraint{Field: "same_top1_pct", Op: ">=", Limit: 95}), rows)
	if d.Outcome != ledger.DecisionSure || d.Chosen.Name != "q8_0" || d.RunnerUp.Name != "f16" {
		t.Fatalf("%s: chosen %+v runner-up %+v, want q8_0 surely over f16", d.Outcome, d.Chosen, d.RunnerUp)
	}
	q4 := d.Candidates[len(d.Candidates)-1]
	if q4.Name != "q4_K_M" || q4.Status != ledger.CandidateExcluded || q4.Checks[0].By != -35 {
		t.Errorf("q4_K_M %+v, want excluded 35 points under the floor", q4)
	}
	// A floor inside q8_0's interval leaves it unsure: the decision says so.
	d = Decide(spec(true, "output_tok_s", ledger.DecisionConstraint{Field: "same_top1_pct", Op: ">=", Limit: 96}), rows)
	if d.Outcome != ledger.DecisionIndeterminate || d.Chosen.Name != "q8_0" || d.Need == 0 {
		t.Errorf("floor 96: %s (%s) need %d, want indeterminate on q8_0's quality", d.Outcome, d.Reason, d.Need)
	}
}

// TestDecisionsInSummary: summary.json carries each outcome's decision, valid against
// its schema, and reads back as written (null ends stay not measured).
func TestDecisionsInSummary(t *testing.T) {
	rows := []ledger.Row{row("f16", 4, 60, 55, 65, 0.2), row("q8_0", 4, 100, 90, 110, 0.15), row("q4_K_M", 4, 98, math.NaN(), 105, 0.1)}
	s := ledger.NewSummary("p", ledger.Manifest{RunID: "r1"}, rows)
	s.Outcome = ledger.OutcomeComplete
	s.Decisions = []ledger.Decision{
		Decide(spec(true, "output_tok_s", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 1}), rows),
		Decide(spec(true, "output_tok_s", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 0.01}), rows),
		Decide(spec(false, "memory_gb"), rows),
	}
	var buf bytes.Buffer
	if err := ledger.WriteSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, ledger.SummarySchema, buf.Bytes())
	back, err := ledger.ReadSummary(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, d := range back.Decisions {
		outcomes = append(outcomes, d.Outcome)
	}
	if !slices.Equal(outcomes, []string{ledger.DecisionIndeterminate, ledger.DecisionNone, ledger.DecisionSure}) {
		t.Fatalf("outcomes %v", outcomes)
	}
	q4 := back.Decisions[0].RunnerUp
	if q4.Name != "q4_K_M" || !math.IsNaN(float64(q4.Lo)) || q4.Hi != 105 {
		t.Errorf("runner-up read back as %+v, want q4_K_M with an unbounded low end", q4)
	}
}

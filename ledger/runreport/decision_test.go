package runreport

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/decide"
	"github.com/planrun/planrun/stats"
)

// decisionRows are three quantizations of one model with known throughput intervals,
// memory and per-user speed: q8_0 fastest and apart, q4_K_M within f16's noise.
func decisionRows() []ledger.Row {
	mk := func(q string, tokS, lo, hi, mem, decode float64) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Model, r.Quantization, r.Tool, r.Workload = "m/tiny/"+q+"/ollama.x/-/w", "tiny", q, "ollama.x", "w"
		r.Status, r.Concurrency, r.Succeeded, r.Requests, r.Runs = ledger.StatusOK, 4, 40, 40, 8
		r.OutputTokS, r.MemPeakGB, r.MemSource = tokS, mem, "rss"
		r.DecodeRate = stats.NewDist([]float64{decode})
		r.CI.Confidence = 0.95
		r.CI.OutputTokS = stats.Interval{Lo: lo, Hi: hi}
		return r
	}
	return []ledger.Row{mk("f16", 60, 55, 65, 0.2, 30), mk("q8_0", 100, 95, 105, 0.15, 20), mk("q4_K_M", 62, 58, 66, 0.1, 25)}
}

func decisionSpec(name string, cons ...ledger.DecisionConstraint) ledger.DecisionSpec {
	return ledger.DecisionSpec{Name: name, Objective: ledger.DecisionObjective{Field: "output_tok_s", Maximize: true}, Constraints: cons}
}

// TestDecisionSection: the report opens with each decision in words: sure with its
// runner-up, indeterminate with how many runs would settle it, none with each row's
// broken limit and by how much, in English and in Chinese.
func TestDecisionSection(t *testing.T) {
	rows := decisionRows()
	ds := []ledger.Decision{
		decide.Decide(decisionSpec("fastest", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 1}), rows),
		decide.Decide(decisionSpec("small", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 0.2}), rows[:1:1]),
		decide.Decide(decisionSpec("close"), []ledger.Row{rows[0], rows[2]}),
		decide.Decide(decisionSpec("tiny", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 0.05}), rows),
	}
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"", []string{
			"## Decision\n\n### fastest\n\nRun q8_0 at c4: output_tok_s 100 tokens/s (95–105).\n\n**Sure**: its output_tok_s interval does not overlap the runner-up's.\n\nRunner-up: q4_K_M at c4: output_tok_s 62.0 tokens/s (58.0–66.0).",
			"Asked: maximize output_tok_s with memory_gb <= 1, over 3 rows.",
			"**Sure**: it is the only row that meets the constraints.",
			"Run q4_K_M at c4: output_tok_s 62.0 tokens/s (58.0–66.0).\n\n**Indeterminate**: its output_tok_s interval overlaps the runner-up's; about ",
			" runs a row would settle it (the rows have 8)",
			"**None**: no row meets the constraints.",
			"- Excluded: f16 at c4 (memory_gb 0.2 GB breaks <= 0.05 by 0.15 GB)",
			"- Excluded: q4_K_M at c4 (memory_gb 0.1 GB breaks <= 0.05 by 0.05 GB)",
		}},
		{"zh", []string{"## 决策", "**确定**", "**不确定**", "**无**: 没有任何行满足约束", "次运行才能判定（现有 8）", "不满足 <= 0.05，差 0.15 GB"}},
	} {
		var b bytes.Buffer
		if err := WriteMarkdown(&b, Report{Language: tc.lang, Rows: rows, Summary: ledger.Summary{Decisions: ds}}); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		results := strings.Index(md, "## Results")
		if tc.lang == "zh" {
			results = strings.Index(md, "## 结果")
		}
		if results < 0 {
			t.Fatalf("no results heading:\n%s", md)
		}
		for _, w := range tc.want {
			if !strings.Contains(md[:results], w) {
				t.Errorf("%q: the section before the results lacks\n%s\n\n%s", tc.lang, w, md[:results])
			}
		}
	}
	lines := DecisionText(ds[3])
	if !strings.HasPrefix(lines[0], `Decision "tiny": none: no row meets the constraints.`) || len(lines) != 5 {
		t.Errorf("terminal:\n%s", strings.Join(lines, "\n"))
	}
	lines = DecisionText(ds[0])
	if lines[0] != `Decision "fastest": Run q8_0 at c4: output_tok_s 100 tokens/s (95–105) (sure: its output_tok_s interval does not overlap the runner-up's).` {
		t.Errorf("terminal: %q", lines[0])
	}
}

// TestDecisionFrontier: the frontier keeps the eligible points no other eligible point
// beats on both axes, whichever way the objective goes.
func TestDecisionFrontier(t *testing.T) {
	pt := func(x, y float64, status string) decisionPoint {
		return decisionPoint{c: ledger.Candidate{Status: status}, x: x, y: y}
	}
	pts := []decisionPoint{
		pt(10, 100, ledger.CandidateQualified), // fastest level, slowest per user
		pt(20, 80, ledger.CandidateQualified),
		pt(15, 70, ledger.CandidateQualified), // beaten by (20, 80)
		pt(30, 50, ledger.CandidateUnsure),    // eligible
		pt(40, 200, ledger.CandidateExcluded), // excluded: never on it
		pt(30, 40, ledger.CandidateQualified), // beaten by (30, 50)
	}
	got := frontier(pts, true)
	want := plotter.XYs{{X: 10, Y: 100}, {X: 20, Y: 80}, {X: 30, Y: 50}}
	if len(got) != len(want) {
		t.Fatalf("maximize: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("maximize: %v, want %v", got, want)
		}
	}
	// Minimizing, lower is better: (30, 40) beats everything at or left of it.
	if got := frontier(pts, false); len(got) != 1 || got[0] != (plotter.XY{X: 30, Y: 40}) {
		t.Errorf("minimize: %v, want only (30, 40)", got)
	}
}

// TestDecisionChart: each decision with two drawable rows gets a chart of the objective
// against per-user speed (or the first floor it sets), the chosen row labelled.
func TestDecisionChart(t *testing.T) {
	rows := decisionRows()
	d := decide.Decide(decisionSpec("fastest", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 0.12}), rows)
	charts, err := DecisionCharts([]ledger.Decision{d, decide.Decide(decisionSpec("one"), rows[:1])}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 1 || charts[0].File != "decision-fastest.svg" {
		t.Fatalf("charts %+v, want one for fastest (one row is no chart)", charts)
	}
	svg := string(charts[0].SVG)
	for _, w := range []string{"chosen: q4_K_M c4", "decode_tok_s (tokens/s)", "excluded by a constraint", "frontier"} {
		if !strings.Contains(svg, w) {
			t.Errorf("the chart lacks %q", w)
		}
	}
	if got := decisionAxis(ledger.Decision{DecisionSpec: decisionSpec("q", ledger.DecisionConstraint{Field: "memory_gb", Op: "<=", Limit: 1},
		ledger.DecisionConstraint{Field: "slo_attainment_pct", Op: ">=", Limit: 95},
		ledger.DecisionConstraint{Field: "same_top1_pct", Op: ">=", Limit: 95})}); got != "same_top1_pct" {
		t.Errorf("axis %q, want the quality floor", got)
	}
	if math.IsNaN(resultFigure(&rows[0], "decode_tok_s")) || !math.IsNaN(resultFigure(&rows[0], "no_such")) {
		t.Error("resultFigure")
	}
}

// TestDecisionChartAxes: an objective on a per-user figure is charted against
// throughput (a TPOT against the decode rate would be one figure twice), and figures
// spanning more than 50 times go on a log scale.
func TestDecisionChartAxes(t *testing.T) {
	min := func(field string) ledger.Decision {
		return ledger.Decision{DecisionSpec: ledger.DecisionSpec{Objective: ledger.DecisionObjective{Field: field}}}
	}
	for field, want := range map[string]string{"tpot_p50_ms": "output_tok_s", "ttft_p99_s": "output_tok_s", "output_tok_s": "decode_tok_s", "memory_gb": "decode_tok_s"} {
		if got := decisionAxis(min(field)); got != want {
			t.Errorf("%s charted against %s, want %s", field, got, want)
		}
	}
	pt := func(y float64) decisionPoint {
		return decisionPoint{c: ledger.Candidate{Lo: ledger.JSONFloat(math.NaN()), Hi: ledger.JSONFloat(math.NaN())}, y: y}
	}
	for _, tc := range []struct {
		ys  []float64
		log bool
	}{{[]float64{1.5, 2.4, 900}, true}, {[]float64{10, 400}, false}, {[]float64{0, 900}, false}} {
		p := newPanel("", "x", "y")
		var pts []decisionPoint
		for _, y := range tc.ys {
			pts = append(pts, pt(y))
		}
		logObjective(p, pts)
		if _, isLog := p.Y.Scale.(plot.LogScale); isLog != tc.log {
			t.Errorf("%v: log scale %v, want %v", tc.ys, isLog, tc.log)
		}
	}
}

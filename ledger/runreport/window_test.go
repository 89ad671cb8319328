package runreport

import (
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
)

// The stability advice and the table's cell name the worst figure, and a contended row's
// advice is to look at the background processes, with their share.
func TestStabilityAdviceNamesFigureAndContention(t *testing.T) {
	tests := []struct {
		name                   string
		stability, figure, cnt string
		share                  float64
		wantNote, wantCell     string
	}{
		{"TPOT unstable", "unstable", "tpot", "quiet", 2, "unstable: TPOT spread ±40% — " + StabilityHint, "unstable (TPOT ±40.0%)"},
		{"an old ledger's TTFT", "noisy", "", "", 0, "noisy: TTFT spread ±40% — " + StabilityHint, "noisy (TTFT ±40.0%)"},
		{"contended", "unstable", "throughput", "contended", 45.2,
			"unstable: throughput spread ±40% — other processes used 45% of the server's cores during the window (contended)",
			"unstable (throughput ±40.0%) · contended 45%"},
		{"contended but stable", "stable", "ttft", "contended", 30, "", "stable (TTFT ±40.0%) · contended 30%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ledgertest.SampleRow("c", 4)
			r.Stability, r.StabilitySpread, r.StabilityFigure = tt.stability, 0.4, tt.figure
			r.Contention, r.NeighbourCPUPct = tt.cnt, tt.share
			n := strings.Join(caveats(r), "; ")
			if tt.wantNote != "" && !strings.Contains(n, tt.wantNote) {
				t.Errorf("notes %q lack %q", n, tt.wantNote)
			}
			if tt.wantNote == "" && strings.Contains(n, "spread") {
				t.Errorf("a stable row's notes %q speak of its spread", n)
			}
			if got := stability(r); got != tt.wantCell {
				t.Errorf("cell %q, want %q", got, tt.wantCell)
			}
			if r.Contention == ledger.ContentionContended && !strings.Contains(StabilityAdvice(r), "background processes") {
				t.Errorf("advice %q", StabilityAdvice(r))
			}
		})
	}
}

// A row with a steady window shows its steady throughput first, says so, and keeps the
// whole window's beside it; the formula under the table says what steady means.
func TestThroughputCellSaysWhichFigure(t *testing.T) {
	r := ledgertest.SampleRow("c", 4)
	if got := throughputCell(r); strings.Contains(got, "steady") {
		t.Errorf("a row without a steady window: %q", got)
	}
	if slices.Contains(formulaLines([]ledger.Row{r}), steadyFormula) {
		t.Error("steady's formula under rows without one")
	}
	r.SteadyOutputTokS = 123.45
	if got := throughputCell(r); !strings.HasPrefix(got, "123.5 steady · ") || !strings.HasSuffix(got, " window") {
		t.Errorf("cell %q", got)
	}
	if !slices.Contains(formulaLines([]ledger.Row{r}), steadyFormula) {
		t.Error("no formula for the steady figure")
	}
}

// The timeline chart draws a strip per level that has slices, and nothing without.
func TestTimelineChart(t *testing.T) {
	if f := timelineFigure(nil); f != nil {
		t.Error("a chart without timelines")
	}
	pts := []TimelinePoint{{0.05, 100, 1, false}, {0.15, 300, 3, true}, {0.25, 310, 3, true}, {0.35, 90, 1, false}}
	levels := []TimelineSeries{{Label: "c c3", Runs: [][]TimelinePoint{pts, pts}}, {Label: "empty"}}
	dir := t.TempDir()
	charts, err := WriteTimelineCharts(dir, levels)
	if err != nil || len(charts) != 1 || charts[0].File != TimelineChartFile || !strings.Contains(string(charts[0].SVG), "c c3: output tok/s") {
		t.Fatalf("charts %d, err %v", len(charts), err)
	}
	if f := timelineFigure(levels); len(f.panels) != 1 || len(f.panels[0]) != 2 || f.entries != 2 {
		t.Errorf("%d strips, %d legend entries: want one strip of two panels, a line per run", len(f.panels), f.entries)
	}
}

package runreport

import (
	"math"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
	"gonum.org/v1/plot/plotter"
)

// A level's load reads as what was run: closed loop, open loop at a rate, or a trace
// replay (paced requests without a rate), capped or not.
func TestLoadNames(t *testing.T) {
	paced := stats.Dist{N: 3, P50: 1e-4, P99: 2e-4, Max: 3e-4}
	for _, tc := range []struct {
		row          ledger.Row
		table, chart string
	}{
		{ledger.Row{Concurrency: 4, SendLag: stats.Dist{P99: math.NaN()}}, "4", "c4"},
		{ledger.Row{Concurrency: 4, RequestRate: 2.5, SendLag: paced}, "4 (open loop 2.5 req/s)", "2.5 req/s"},
		{ledger.Row{Concurrency: 0, SendLag: paced}, "trace replay", "replay"},
		{ledger.Row{Concurrency: 8, SendLag: paced}, "trace replay, ≤ 8 in flight", "replay c8"},
	} {
		if got := concurrency(tc.row); got != tc.table {
			t.Errorf("table load %q, want %q", got, tc.table)
		}
		if got := loadLabel(tc.row); got != tc.chart {
			t.Errorf("chart load %q, want %q", got, tc.chart)
		}
	}
}

// A cell's line is drawn through its levels in load order, whatever order the rows came
// in (a resumed run appends a level after the higher ones), and a level without the
// figure is left out.
func TestCellSeriesSortedByLoad(t *testing.T) {
	rows := []ledger.Row{
		{CellID: "a", Concurrency: 8, OutputTokS: 80},
		{CellID: "b", Concurrency: 2, OutputTokS: 20},
		{CellID: "a", Concurrency: 1, OutputTokS: 10},
		{CellID: "a", Concurrency: 4, OutputTokS: math.NaN()},
		{CellID: "a", Concurrency: 2, OutputTokS: 20},
	}
	ax := loadAxes[0]
	got := cellSeries(rows, cellIndex(rows), ax.has, ax.x, func(r ledger.Row) float64 { return r.OutputTokS })
	if len(got) != 2 || got[0].cell != 0 || got[1].cell != 1 {
		t.Fatalf("series %+v, want cells a then b", got)
	}
	a := got[0]
	want := plotter.XYs{{X: 1, Y: 10}, {X: 2, Y: 20}, {X: 8, Y: 80}}
	if len(a.xys) != len(want) || len(a.rows) != len(want) {
		t.Fatalf("cell a: %v (%d rows), want %v", a.xys, len(a.rows), want)
	}
	for i := range want {
		if a.xys[i] != want[i] || a.rows[i].Concurrency != int(want[i].X) {
			t.Errorf("cell a point %d: %v from c=%d, want %v", i, a.xys[i], a.rows[i].Concurrency, want[i])
		}
	}
}

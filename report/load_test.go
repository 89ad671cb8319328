package report

import (
	"math"
	"testing"

	"github.com/planrun/planrun/stats"
)

// A level's load reads as what was run: closed loop, open loop at a rate, or a trace
// replay (paced requests without a rate), capped or not.
func TestLoadNames(t *testing.T) {
	paced := stats.Dist{N: 3, P50: 1e-4, P99: 2e-4, Max: 3e-4}
	for _, tc := range []struct {
		row          Row
		table, chart string
	}{
		{Row{Concurrency: 4, SendLag: stats.Dist{P99: math.NaN()}}, "4", "c4"},
		{Row{Concurrency: 4, RequestRate: 2.5, SendLag: paced}, "4 (open loop 2.5 req/s)", "2.5 req/s"},
		{Row{Concurrency: 0, SendLag: paced}, "trace replay", "replay"},
		{Row{Concurrency: 8, SendLag: paced}, "trace replay, ≤ 8 in flight", "replay c8"},
	} {
		if got := concurrency(tc.row); got != tc.table {
			t.Errorf("table load %q, want %q", got, tc.table)
		}
		if got := loadLabel(tc.row); got != tc.chart {
			t.Errorf("chart load %q, want %q", got, tc.chart)
		}
	}
}

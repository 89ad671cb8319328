package runreport

import (
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
)

// The shared prefix share is a ledger column, a result field, and a note beside TTFT
// with its formula under the tables, only on rows that shared something.
func TestSharedPrefixShown(t *testing.T) {
	shared, plain := ledger.NewRow(), ledger.NewRow()
	shared.CellID, plain.CellID = "a", "b"
	shared.SharedPrefixPct, plain.SharedPrefixPct = 42, 0

	shared.SendLag.P50, shared.SendLag.P99, shared.SendLag.Max = 0.0001, 0.0005, 0.002
	back, err := ledger.ParseRecord(shared.Record())
	if err != nil || back.SharedPrefixPct != 42 {
		t.Fatalf("ledger round trip: %v, %v", back.SharedPrefixPct, err)
	}
	if l := back.SendLag; l.P50 != 0.0001 || l.P99 != 0.0005 || l.Max != 0.002 {
		t.Errorf("send lag round trip: %+v", l)
	}
	// Columns appended later (the load delivered) come after the send lag's three.
	if h := ledger.Header(); slices.Index(h, "send_lag_p50_ms") < 1 || h[slices.Index(h, "send_lag_p50_ms")-1] != "shared_prefix_pct" ||
		!slices.Equal(h[slices.Index(h, "send_lag_p50_ms"):slices.Index(h, "send_lag_p50_ms")+3], []string{"send_lag_p50_ms", "send_lag_p99_ms", "send_lag_max_ms"}) {
		t.Errorf("shared_prefix_pct is not the column before the send lag's three: %v", h)
	}
	if v := ledger.ResultValues(&shared)["shared_prefix_pct"]; v.IsNull() || v.AsBigFloat().String() != "42" {
		t.Errorf("result.shared_prefix_pct = %#v", v)
	}

	body, _ := headline([]ledger.Row{shared, plain})
	if ttft := body[0][3]; !strings.HasSuffix(ttft, " · prefix 42%") {
		t.Errorf("headline TTFT of a shared row = %q, want the share beside it", ttft)
	}
	if ttft := body[1][3]; strings.Contains(ttft, "prefix") {
		t.Errorf("headline TTFT of a row without a share = %q", ttft)
	}
	if d := detailCells(shared)[4]; !strings.Contains(d, "prefix 42%") {
		t.Errorf("detail TTFT = %q", d)
	}
	if !slices.Contains(formulaLines([]ledger.Row{plain, shared}), sharedPrefixFormula) {
		t.Error("no shared prefix formula under tables with a shared row")
	}
	if slices.Contains(formulaLines([]ledger.Row{plain}), sharedPrefixFormula) {
		t.Error("shared prefix formula under tables without one")
	}
}

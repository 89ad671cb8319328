package runreport

import (
	"math"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
)

// A paced level's detail row gives its send lag beside its fidelity (a trace replay's
// report showed none); a closed loop's, which has none, adds nothing.
func TestDetailShowsSendLag(t *testing.T) {
	r := ledger.NewRow()
	r.Fidelity = ledger.FidelityOK
	r.SendLag.P99, r.SendLag.Max = 0.0274, 0.0902
	cells := detailCells(r)
	fid := cells[len(cells)-2]
	if !strings.Contains(fid, "ok (send lag p99 27.40 ms, max 90.20 ms)") {
		t.Errorf("stability / fidelity cell %q lacks the send lag", fid)
	}
	r.SendLag.P99, r.SendLag.Max = math.NaN(), math.NaN()
	if cells := detailCells(r); strings.Contains(cells[len(cells)-2], "send lag") {
		t.Errorf("closed loop: %q", cells[len(cells)-2])
	}
}

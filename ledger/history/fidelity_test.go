package history

import (
	"testing"

	"github.com/planrun/planrun/ledger"
)

// A judgement says when the judged run, or runs of its baseline, did not deliver the
// load asked; nothing when every one was ok or not judged.
func TestFidelityNote(t *testing.T) {
	row := func(f string) ledger.Row { r := ledger.NewRow(); r.Fidelity = f; return r }
	sr := Series{Points: []Point{{Row: row(ledger.FidelityOK)}, {Row: row(ledger.FidelityLate)}, {Row: row("")}}}
	for _, c := range []struct {
		row  ledger.Row
		sr   Series
		want string
	}{
		{row(ledger.FidelityOK), Series{Points: sr.Points[:1]}, ""},
		{row(""), Series{}, ""},
		{row(ledger.FidelityLate), Series{Points: sr.Points[:1]}, "this run's fidelity is late"},
		{row(ledger.FidelityOK), sr, "1 of its 3 baseline runs' fidelity was not ok"},
		{row(ledger.FidelityShort), sr, "this run's fidelity is short, 1 of its 3 baseline runs' fidelity was not ok"},
	} {
		if got := fidelityNote(c.row, c.sr); got != c.want {
			t.Errorf("fidelityNote(%q) = %q, want %q", c.row.Fidelity, got, c.want)
		}
	}
}

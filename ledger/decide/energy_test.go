package decide

import (
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// A decision minimising energy per token reads the row's figure and its interval across
// runs by name: apart intervals choose surely, overlapping ones do not.
func TestDecideEnergyPerToken(t *testing.T) {
	metered := func(q string, jpt, lo, hi float64) ledger.Row {
		r := row(q, 4, 100, 95, 105, 0.1)
		r.EnergyPerTokenJ, r.EnergyPerTokenCI = jpt, stats.Interval{Lo: lo, Hi: hi}
		return r
	}
	for _, tc := range []struct {
		name    string
		rows    []ledger.Row
		outcome string
	}{
		{"apart", []ledger.Row{metered("f16", 3, 2.8, 3.2), metered("q8_0", 1.5, 1.4, 1.6)}, ledger.DecisionSure},
		{"overlapping", []ledger.Row{metered("f16", 3, 1.5, 3.5), metered("q8_0", 1.5, 1.4, 1.6)}, ledger.DecisionIndeterminate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(spec(false, "energy_per_token_j"), tc.rows)
			if d.Outcome != tc.outcome || d.Chosen.Name != "q8_0" {
				t.Errorf("%s (%s), chose %+v; want %s on q8_0", d.Outcome, d.Reason, d.Chosen, tc.outcome)
			}
		})
	}
}

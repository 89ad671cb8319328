package ledger

import (
	"math"
	"testing"

	"github.com/planrun/planrun/stats"
)

// TestSetEnergy holds the energy figures to hand-computed runs: joules per token,
// tokens per joule and mean watts are each the median of the runs' own, the energy
// cost is joules per token at the kWh price (10⁶ tokens at 3.6 J each are one kWh),
// and the cost per million tokens adds it to the hour's share.
func TestSetEnergy(t *testing.T) {
	nan := math.NaN()
	runs := []RunEnergy{
		{Joules: 3600, Seconds: 10, OutputTokens: 1000}, // 3.6 J/token, 360 W
		{Joules: 4000, Seconds: 10, OutputTokens: 1000}, // 4 J/token, 400 W
		{Joules: 3000, Seconds: 12, OutputTokens: 1000}, // 3 J/token, 250 W
	}
	for _, tc := range []struct {
		name                  string
		runs                  []RunEnergy
		kwh, hour             float64
		jpt, tpj, watts       float64
		energyCost, totalCost float64
	}{
		{"metered, no price", runs, nan, nan, 3.6, 1 / 3.6, 360, nan, nan},
		// 3.6 J a token: 1 kWh a million tokens, 0.3 at 0.3/kWh.
		{"kWh price", runs, 0.3, nan, 3.6, 1 / 3.6, 360, 0.3, 0.3},
		// 3.6 an hour at 100 tok/s: 10 per Mtok, plus 0.3 for the energy.
		{"kWh and hour", runs, 0.3, 3.6, 3.6, 1 / 3.6, 360, 0.3, 10.3},
		// Runs without tokens or joules count for nothing; a kWh price without energy
		// leaves the cost unknown rather than understated.
		{"nothing metered", []RunEnergy{{Joules: nan, Seconds: 10, OutputTokens: 1000}, {Joules: 50, Seconds: 1}}, 0.3, 3.6, nan, nan, nan, nan, nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRow()
			r.Succeeded, r.OutputTokens, r.OutputTokS = 30, 3000, 100
			r.CI.OutputTokS = stats.Interval{Lo: 100, Hi: 100}
			r.PricePerHour, r.PricePerKWh, r.Currency = tc.hour, tc.kwh, "EUR"
			r.SetEnergy("fake meter, energy counter", tc.runs, 0.95)
			same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-9 }
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"energy_per_token_j", r.EnergyPerTokenJ, tc.jpt}, {"tokens_per_joule", r.TokensPerJoule, tc.tpj},
				{"power_mean_w", r.PowerMeanW, tc.watts}, {"energy_cost_per_mtok", r.EnergyCostPerMTok, tc.energyCost},
				{"cost_per_mtok", r.CostPerMTok, tc.totalCost},
			} {
				if !same(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if r.EnergySource != "fake meter, energy counter" {
				t.Errorf("source %q", r.EnergySource)
			}
		})
	}
}

// TestEnergyIntervals: six runs bound the median's 95% interval (stats.MedianOfRuns),
// the energy cost's ends follow joules per token's, and all of it survives the CSV and
// reads as result fields (a decision's objective).
func TestEnergyIntervals(t *testing.T) {
	r := NewRow()
	r.CellID, r.Status, r.CI.Confidence = "m/a", StatusOK, 0.95
	r.Succeeded, r.OutputTokens = 60, 6000
	r.PricePerKWh, r.Currency = 0.36, "USD"
	var runs []RunEnergy
	for i, j := range []float64{3000, 3200, 3400, 3600, 3800, 4000} {
		runs = append(runs, RunEnergy{Joules: j, Seconds: 10 + float64(i), OutputTokens: 1000})
	}
	r.SetEnergy("meter", runs, 0.95)
	want := stats.MedianOfRuns([]float64{3, 3.2, 3.4, 3.6, 3.8, 4}, 0.95)
	if !r.EnergyPerTokenCI.Bounded() || math.Abs(r.EnergyPerTokenCI.Lo-want.Lo) > 1e-12 || math.Abs(r.EnergyPerTokenCI.Hi-want.Hi) > 1e-12 || r.EnergyPerTokenJ != 3.5 {
		t.Fatalf("energy per token %v, interval %+v; want 3.5 in %+v from six runs", r.EnergyPerTokenJ, r.EnergyPerTokenCI, want)
	}
	// 0.36 a kWh is 0.1 a million tokens per joule a token.
	if lo, hi := r.EnergyCostCI.Lo, r.EnergyCostCI.Hi; math.Abs(lo-want.Lo/10) > 1e-12 || math.Abs(hi-want.Hi/10) > 1e-12 {
		t.Errorf("energy cost interval [%v, %v], want %+v / 10", lo, hi, want)
	}
	back, err := ParseRecord(r.Record())
	if err != nil {
		t.Fatal(err)
	}
	// The CSV keeps six significant decimals.
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }
	if back.Energy.EnergySource != "meter" || back.EnergyPerTokenJ != r.EnergyPerTokenJ || back.PricePerKWh != 0.36 ||
		back.EnergyPerTokenCI != r.EnergyPerTokenCI || !near(back.PowerMeanCI.Lo, r.PowerMeanCI.Lo) || !near(back.TokensPerJouleCI.Hi, r.TokensPerJouleCI.Hi) ||
		!near(back.PowerMeanW, r.PowerMeanW) || back.EnergyCostCI != r.EnergyCostCI {
		t.Errorf("read back %+v, wrote %+v", back.Energy, r.Energy)
	}
	vals := ResultValues(&back)
	for name, want := range map[string]float64{"energy_per_token_j": r.EnergyPerTokenJ, "energy_per_token_j_lo": want.Lo, "energy_per_token_j_hi": want.Hi,
		"energy_cost_per_mtok": 0.35, "power_mean_w": r.PowerMeanW} {
		if f, _ := vals[name].AsBigFloat().Float64(); vals[name].IsNull() || !near(f, want) {
			t.Errorf("result.%s = %v, want %v", name, vals[name], want)
		}
	}
}

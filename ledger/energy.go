package ledger

import (
	"math"

	"github.com/planrun/planrun/stats"
)

// Energy is what a row's output tokens drew from its hardware's power meter (the
// hardware block's power { }, or NVML's GPUs without one), each run over exactly its
// throughput's window (first request start to last request end): the median across
// runs, with the interval of the median run's (stats.MedianOfRuns). TokensPerJoule
// (Row's, beside EnergyJ) is the same runs' median.
type Energy struct {
	// EnergySource names the meter and how its joules were read ("rapl package-0
	// (/sys/class/powercap), energy counter"), or says why there is no energy figure
	// ("none: ..."); empty when the row was never metered.
	EnergySource string
	// EnergyPerTokenJ is joules per output token; PowerMeanW the mean watts over the
	// tokens' window (its joules over its seconds).
	EnergyPerTokenJ float64
	PowerMeanW      float64
	// EnergyCostPerMTok is what a million output tokens' energy costs at the hardware's
	// PricePerKWh (Cost's), in Currency, also counted in CostPerMTok.
	EnergyCostPerMTok float64
	// The intervals across runs, at the row's confidence.
	EnergyPerTokenCI, TokensPerJouleCI, PowerMeanCI, EnergyCostCI stats.Interval
}

func newEnergy() Energy {
	nan := math.NaN()
	return Energy{EnergyPerTokenJ: nan, PowerMeanW: nan, EnergyCostPerMTok: nan,
		EnergyPerTokenCI: stats.Unbounded(0), TokensPerJouleCI: stats.Unbounded(0), PowerMeanCI: stats.Unbounded(0), EnergyCostCI: stats.Unbounded(0)}
}

// RunEnergy is one measured run's energy over its window.
type RunEnergy struct {
	Joules, Seconds float64
	OutputTokens    int
}

// SetEnergy sets the row's energy figures from its runs' (at confidence conf) with the
// meter's description, then its energy cost and its cost; runs without tokens, a
// window or joules count for nothing.
func (r *Row) SetEnergy(source string, runs []RunEnergy, conf float64) {
	r.EnergySource = source
	var jpt, tpj, watts []float64
	for _, e := range runs {
		if e.OutputTokens <= 0 || e.Seconds <= 0 || math.IsNaN(e.Joules) || e.Joules <= 0 {
			continue
		}
		jpt = append(jpt, e.Joules/float64(e.OutputTokens))
		tpj = append(tpj, float64(e.OutputTokens)/e.Joules)
		watts = append(watts, e.Joules/e.Seconds)
	}
	if len(jpt) == 0 {
		return
	}
	r.EnergyPerTokenJ, r.EnergyPerTokenCI = stats.Median(jpt), stats.MedianOfRuns(jpt, conf)
	r.TokensPerJoule, r.TokensPerJouleCI = stats.Median(tpj), stats.MedianOfRuns(tpj, conf)
	r.PowerMeanW, r.PowerMeanCI = stats.Median(watts), stats.MedianOfRuns(watts, conf)
	r.SetCost()
}

// setEnergyCost is the cost of a million output tokens' energy: EnergyPerTokenJ × 10⁶
// J is 10⁶/3.6×10⁶ kWh at PricePerKWh; NaN without a price or an energy figure.
func (r *Row) setEnergyCost() {
	perMTok := func(j float64) float64 { return j * 1e6 / 3.6e6 * r.PricePerKWh }
	r.EnergyCostPerMTok, r.EnergyCostCI = math.NaN(), stats.Unbounded(0)
	if math.IsNaN(r.PricePerKWh) || math.IsNaN(r.EnergyPerTokenJ) {
		return
	}
	r.EnergyCostPerMTok = perMTok(r.EnergyPerTokenJ)
	r.EnergyCostCI = stats.Interval{Lo: perMTok(r.EnergyPerTokenCI.Lo), Hi: perMTok(r.EnergyPerTokenCI.Hi), Need: r.EnergyPerTokenCI.Need}
}

// energyColumns are the energy figures, appended after the earlier formats' columns so
// older ledgers upgrade in place.
func energyColumns() []column {
	c := []column{
		strCol("energy_source", func(r *Row) *string { return &r.EnergySource }),
		floatCol("energy_per_token_j", 1, func(r *Row) *float64 { return &r.EnergyPerTokenJ }),
		floatCol("power_mean_w", 1, func(r *Row) *float64 { return &r.PowerMeanW }),
		floatCol("price_per_kwh", 1, func(r *Row) *float64 { return &r.PricePerKWh }),
		floatCol("energy_cost_per_mtok", 1, func(r *Row) *float64 { return &r.EnergyCostPerMTok }),
	}
	for _, f := range energyIntervals {
		c = append(c, endCol(f.name+"_lo", 1, false, f.get, f.get), endCol(f.name+"_hi", 1, true, f.get, f.get))
	}
	return c
}

// energyIntervals are the energy figures with an interval across runs.
var energyIntervals = []struct {
	name string
	get  func(*Row) *stats.Interval
}{
	{"energy_per_token_j", func(r *Row) *stats.Interval { return &r.EnergyPerTokenCI }},
	{"tokens_per_joule", func(r *Row) *stats.Interval { return &r.TokensPerJouleCI }},
	{"power_mean_w", func(r *Row) *stats.Interval { return &r.PowerMeanCI }},
	{"energy_cost_per_mtok", func(r *Row) *stats.Interval { return &r.EnergyCostCI }},
}

// energyFields are result.* names for the energy figures and their intervals' ends,
// which a decision's objective or constraint reads (decide takes name_lo and name_hi).
var energyFields = func() []ResultField {
	out := []ResultField{
		numField("energy_per_token_j", "J", "joules the power meter counted per output token, over each run's window (median across runs)", 1,
			func(r *Row) float64 { return r.EnergyPerTokenJ }),
		numField("tokens_per_joule", "tok/J", "output tokens per joule of the power meter, over each run's window (median across runs)", 1,
			func(r *Row) float64 { return r.TokensPerJoule }),
		numField("power_mean_w", "W", "mean power over the output tokens' window (median across runs)", 1,
			func(r *Row) float64 { return r.PowerMeanW }),
		numField("energy_cost_per_mtok", "per Mtok", "what a million output tokens' energy costs at the power block's price_per_kwh", 1,
			func(r *Row) float64 { return r.EnergyCostPerMTok }),
		strField("energy_source", "the power meter and how its joules were read, or none: why",
			func(r *Row) string { return r.EnergySource }),
	}
	for _, f := range energyIntervals {
		for _, hi := range []bool{false, true} {
			name, doc := f.name+"_lo", "lower end of the interval of "+f.name
			if hi {
				name, doc = f.name+"_hi", "upper end of the interval of "+f.name
			}
			out = append(out, numField(name, columnUnit(column{name: f.name, kind: kindNumber}), doc, 1, func(r *Row) float64 {
				if hi {
					return f.get(r).Hi
				}
				return f.get(r).Lo
			}))
		}
	}
	return out
}()

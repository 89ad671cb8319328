package ledger

import (
	"math"

	"github.com/planrun/planrun/stats"
)

// Cost is what a row's output tokens cost where the plan gives prices: the prices it
// was given (a backend's price list per million input and output tokens, its hardware's
// price per hour; NaN when not given), in the plan's Currency, and the cost per million
// output tokens they make with the row's own figures, with its interval. The row carries
// the prices so its cost can be recomputed from the row alone (SetCost).
type Cost struct {
	PriceInputPerMTok, PriceOutputPerMTok float64
	PricePerHour                          float64
	// PricePerKWh is the price of a kWh of the hardware's power meter (its power
	// block's price_per_kwh): the energy's share of the cost (energy.go).
	PricePerKWh float64
	Currency    string
	// CostPerMTok is the cost of a million output tokens: the token prices, the input
	// tokens sent for them included (PromptTokensActual × Succeeded per OutputTokens),
	// plus the hardware's hour over the output tokens it made in an hour at OutputTokS,
	// plus their energy at the power block's price per kWh (EnergyCostPerMTok).
	// NaN without a price, or without the figure a price needs.
	CostPerMTok float64
	// CostCI is its interval: the hour's share moves with the interval of OutputTokS
	// across runs (a faster end is a cheaper one); the token prices' share is exact.
	CostCI stats.Interval
}

func newCost() Cost {
	nan := math.NaN()
	return Cost{PriceInputPerMTok: nan, PriceOutputPerMTok: nan, PricePerHour: nan, PricePerKWh: nan, CostPerMTok: nan, CostCI: stats.Unbounded(0)}
}

// Priced reports whether the row was given any price.
func (c Cost) Priced() bool {
	return !math.IsNaN(c.PriceInputPerMTok) || !math.IsNaN(c.PriceOutputPerMTok) || !math.IsNaN(c.PricePerHour) || !math.IsNaN(c.PricePerKWh)
}

// SetCost computes the row's cost per million output tokens and its interval from its
// prices and figures; the row keeps NaN where it has no price or no output tokens.
func (r *Row) SetCost() {
	r.CostPerMTok, r.CostCI = math.NaN(), stats.Unbounded(0)
	r.setEnergyCost()
	if !r.Priced() || r.OutputTokens <= 0 {
		return
	}
	tokens, ok := 0.0, false // the token prices' share: exact, no interval
	if !math.IsNaN(r.PriceOutputPerMTok) {
		tokens, ok = r.PriceOutputPerMTok, true
	}
	if !math.IsNaN(r.PriceInputPerMTok) {
		in := r.PromptTokensActual
		if math.IsNaN(in) {
			in = float64(r.PromptTokensRequested) // the server counted none: what was asked
		}
		tokens += r.PriceInputPerMTok * in * float64(r.Succeeded) / float64(r.OutputTokens)
		ok = true
	}
	cost, iv := tokens, stats.Interval{Lo: tokens, Hi: tokens}
	if !math.IsNaN(r.PricePerHour) {
		perMTok := func(tokS float64) float64 { // the hour's price over the millions of tokens it makes
			if math.IsNaN(tokS) || tokS <= 0 {
				return math.NaN()
			}
			return r.PricePerHour / (tokS * 3600 / 1e6)
		}
		hour := perMTok(r.OutputTokS)
		if math.IsNaN(hour) {
			return
		}
		cost += hour
		// Higher throughput, lower cost: the interval's ends swap.
		iv = stats.Interval{Lo: tokens + perMTok(r.CI.OutputTokS.Hi), Hi: tokens + perMTok(r.CI.OutputTokS.Lo), Need: r.CI.OutputTokS.Need}
		ok = true
	}
	if !math.IsNaN(r.PricePerKWh) { // the energy's share (energy.go): a kWh price with no energy measured leaves no cost
		e := r.EnergyCostPerMTok
		if math.IsNaN(e) {
			return
		}
		cost += e
		iv = stats.Interval{Lo: iv.Lo + r.EnergyCostCI.Lo, Hi: iv.Hi + r.EnergyCostCI.Hi, Need: max(iv.Need, r.EnergyCostCI.Need)}
		ok = true
	}
	if ok {
		r.CostPerMTok, r.CostCI = cost, iv
	}
}

// costColumns are the prices and the cost, appended after the earlier formats' columns
// so older ledgers upgrade in place (the cost's interval is among the interval columns).
func costColumns() []column {
	return []column{
		floatCol("price_input_per_mtok", 1, func(r *Row) *float64 { return &r.PriceInputPerMTok }),
		floatCol("price_output_per_mtok", 1, func(r *Row) *float64 { return &r.PriceOutputPerMTok }),
		floatCol("price_per_hour", 1, func(r *Row) *float64 { return &r.PricePerHour }),
		strCol("currency", func(r *Row) *string { return &r.Currency }),
		floatCol("cost_per_mtok", 1, func(r *Row) *float64 { return &r.CostPerMTok }),
	}
}

// costFields are result.* names for the cost (its interval's ends are intervalFields').
var costFields = []ResultField{
	numField("cost_per_mtok", "per Mtok", "cost per million output tokens, in the plan's currency, from the backend's token prices and the hardware's price per hour", 1,
		func(r *Row) float64 { return r.CostPerMTok }),
}

package runreport

import (
	"fmt"
	"math"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// energyNote says what the energy figures are over (a Markdown line).
const energyNote = "Over exactly the tokens' window: each measured run's joules from its first request's start to its last request's end (the window tok/s divides by), against that run's output tokens (the server's count); the median across runs, in parentheses the interval of the median run at the row's confidence (`?`: too few runs to bound it, 6 at 95%). Energy cost = J per token × 10⁶ / 3.6×10⁶ × the power block's `price_per_kwh`. Each meter measures its own part (NVML the GPU boards, RAPL the CPU packages, a wall plug the whole machine): compare rows whose source agrees."

// metered reports whether a row's hardware had a power meter: an energy figure, or a
// source that says why there is none. A row never metered shows no energy line.
func metered(r ledger.Row) bool { return r.EnergySource != "" || !math.IsNaN(r.EnergyPerTokenJ) }

// energyCells is the energy table of the metered rows, with the energy's cost where a
// row has a price per kWh; no body when no row was metered.
func energyCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "J / output token", "Output tokens / J", "Mean power (W)"}
	currency, priced := "", false
	for _, r := range rows {
		if metered(r) && !math.IsNaN(r.PricePerKWh) {
			currency, priced = r.Currency, true
			break
		}
	}
	if priced {
		head = append(head, fmt.Sprintf("Energy cost (%s/Mtok)", mdtable.Dash(currency)))
	}
	head = append(head, "Source")
	for _, r := range rows {
		if !metered(r) {
			continue
		}
		cells := []string{r.CellID, concurrency(r), withEnds(r.EnergyPerTokenJ, r.EnergyPerTokenCI),
			withEnds(r.TokensPerJoule, r.TokensPerJouleCI), withEnds(r.PowerMeanW, r.PowerMeanCI)}
		if priced {
			cells = append(cells, withEnds(r.EnergyCostPerMTok, r.EnergyCostCI))
		}
		body = append(body, append(cells, mdtable.Dash(r.EnergySource)))
	}
	return head, body
}

package runreport

import (
	"math"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// throughputCell is the tables' throughput: the steady window's where the level had one
// (it describes the server: the ramp and the drain do not count), said so, with the
// whole window's beside it; else the whole window's.
func throughputCell(r ledger.Row) string {
	whole := withInterval(r, "output_tok_s", r.OutputTokS, 1, 1)
	if math.IsNaN(r.SteadyOutputTokS) {
		return whole
	}
	return mdtable.Num(r.SteadyOutputTokS, 1, 1) + " steady · " + whole + " window"
}

// steadyFormula defines the steady figure under the tables of rows that have one.
const steadyFormula = "**Steady** throughput = output tokens over the level's steady window / its length: a closed loop's span from its concurrency-th request's start to its last request's start (every slot busy), an open loop's from its first request's end to its last send (the rate held); a request's first token counts when it came, the rest spread evenly to its last chunk. The whole window (first start to last end) counts the ramp up and the drain as if the server were slow; both are in the CSV (`steady_output_tok_s`, `output_tok_s`)."

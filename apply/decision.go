package apply

import (
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/decide"
	"github.com/planrun/planrun/plan"
)

// decisions answers the plan's decision blocks over the run's rows so far, each over
// the rows of the cells it covers. Embeddings rows generate no tokens and are left out.
func decisions(p *plan.Plan, rows []ledger.Row) []ledger.Decision {
	var out []ledger.Decision
	for _, d := range p.Decisions {
		var covered []ledger.Row
		for _, r := range rows {
			if d.Applies(r.CellID) && !ledger.IsEmbeddings(r) {
				covered = append(covered, r)
			}
		}
		out = append(out, decide.Decide(d.DecisionSpec, covered))
	}
	return out
}

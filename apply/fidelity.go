package apply

import (
	"github.com/planrun/planrun/apply/fidelity"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

// closedLoopSlots is a closed loop's slots, whose held span stats.Delivered measures;
// 0 for a paced or session level.
func closedLoopSlots(w *plan.Workload, level plan.LoadLevel) int {
	if level.RequestRate > 0 || w.Replay != nil || w.Session != nil {
		return 0
	}
	return level.Concurrency
}

// judgeFidelity is the row's fidelity verdict (fidelity.Judge) from what the level's
// client, or its agents, said of themselves; none where nothing was measured to judge.
func judgeFidelity(w *plan.Workload, level plan.LoadLevel, row *ledger.Row, m levelMeasurement) fidelityVerdict {
	if !m.Monitored || m.Interrupted || row.Requests == 0 {
		return fidelityVerdict{}
	}
	tpot := fidelity.MeanTPOT(*row)
	c := fidelity.Client{Saturated: m.Client.Saturated(tpot)}
	if m.AgentCount > 1 {
		// The agents sent the level: each one's client is its own, and the load is the
		// sum of their shares. The lead only merged their records.
		c = fidelity.Agents(w, level, m.AgentCount, m.Agents, tpot)
	}
	v := fidelity.Judge(w, level, row, c)
	return fidelityVerdict{judged: true, verdict: v.Verdict, shortfallPct: v.ShortfallPct, note: v.Note}
}

// fidelityVerdict is judgeFidelity's verdict on a level (ledger.FidelityOK, ...), how far the
// load delivered fell short of the load asked, and the note that says why a level is not
// ok; judged is false where nothing was measured to judge.
type fidelityVerdict struct {
	judged       bool
	verdict      string
	shortfallPct float64
	note         string
}

package ledger

import (
	"math"

	"github.com/planrun/planrun/stats"
)

// SessionFigures are one row's session figures in summary.json.
type SessionFigures struct {
	CellID             string        `json:"cell_id"`
	Concurrency        int           `json:"concurrency"`
	RequestRate        float64       `json:"request_rate,omitempty"`
	Turns              int           `json:"turns"`
	Sessions           int           `json:"sessions"`
	Completed          int           `json:"completed"`
	TurnsNotSent       int           `json:"turns_not_sent"`
	TurnsCompletedMean JSONFloat     `json:"turns_completed_mean"`
	DurationP50        JSONFloat     `json:"duration_p50_s"`
	DurationP90        JSONFloat     `json:"duration_p90_s"`
	PerTurn            []TurnFigures `json:"per_turn"`
	// AgentLoop are the sessions' agent loops' figures, per task and per step; absent
	// without an agent block.
	AgentLoop *AgentLoopFigures `json:"agent_loop,omitempty"`
}

// TurnFigures are one turn index's figures in summary.json (null: not measured).
type TurnFigures struct {
	Turn             int       `json:"turn"`
	Requests         int       `json:"requests"`
	Succeeded        int       `json:"succeeded"`
	TTFTP50          JSONFloat `json:"ttft_p50_s"`
	TTFTP90          JSONFloat `json:"ttft_p90_s"`
	TTFTMean         JSONFloat `json:"ttft_mean_s"`
	E2EP50           JSONFloat `json:"e2e_p50_s"`
	PromptTokensMean JSONFloat `json:"prompt_tokens_mean"`
}

// sessionFigures are the session figures of the rows of session workloads.
func sessionFigures(rows []Row) []SessionFigures {
	var out []SessionFigures
	for _, r := range rows {
		s := r.Sessions
		if s == nil {
			continue
		}
		f := SessionFigures{CellID: r.CellID, Concurrency: r.Concurrency, RequestRate: r.RequestRate, Turns: s.Turns,
			Sessions: s.Sessions, Completed: s.Completed, TurnsNotSent: s.TurnsNotSent,
			TurnsCompletedMean: JSONFloat(s.TurnsCompleted.Mean), DurationP50: JSONFloat(s.Duration.P50), DurationP90: JSONFloat(s.Duration.P90),
			PerTurn: make([]TurnFigures, 0, len(r.Turns)), AgentLoop: agentLoopFigures(&r)}
		for _, t := range r.Turns {
			f.PerTurn = append(f.PerTurn, turnFigures(t))
		}
		out = append(out, f)
	}
	return out
}

func turnFigures(t stats.TurnSummary) TurnFigures {
	return TurnFigures{Turn: t.Turn, Requests: t.Requests, Succeeded: t.Succeeded, TTFTP50: JSONFloat(t.TTFT.P50),
		TTFTP90: JSONFloat(t.TTFT.P90), TTFTMean: JSONFloat(t.TTFT.Mean), E2EP50: JSONFloat(t.E2E.P50),
		PromptTokensMean: JSONFloat(t.PromptTokensMean)}
}

// sessionDurationP50 is result.session_duration_p50_s: NaN without sessions.
func sessionDurationP50(r *Row) float64 {
	if r.Sessions == nil {
		return math.NaN()
	}
	return r.Sessions.Duration.P50
}

package ledger

import (
	"encoding/json"

	"github.com/planrun/planrun/stats"
)

// The row's list figures (per turn, per session, per agent step) as JSON columns, so a
// row read back from a CSV (a batch job's, a resumed run's) renders the same tables as
// the row in memory. JSON is the model_mix column's form; every float is JSONFloat, so
// NaN (not measured) reads back as NaN and a value as the same float64.

// listColumns are the JSON columns of Row.Turns, Row.Sessions and Row.AgentPerStep,
// after every earlier format's; each is empty when the row has none.
func listColumns() []column {
	return []column{
		jsonCol("session_turns",
			func(r *Row) any {
				if len(r.Turns) == 0 {
					return nil
				}
				out := make([]turnJSON, len(r.Turns))
				for i, t := range r.Turns {
					out[i] = turnJSON{t.Turn, t.Requests, t.Succeeded, toDistJSON(t.TTFT), toDistJSON(t.E2E), JSONFloat(t.PromptTokensMean)}
				}
				return out
			},
			func(r *Row, b []byte) error {
				var in []turnJSON
				if err := json.Unmarshal(b, &in); err != nil {
					return err
				}
				r.Turns = make([]stats.TurnSummary, len(in))
				for i, t := range in {
					r.Turns[i] = stats.TurnSummary{Turn: t.Turn, Requests: t.Requests, Succeeded: t.Succeeded,
						TTFT: t.TTFT.dist(), E2E: t.E2E.dist(), PromptTokensMean: float64(t.PromptTokensMean)}
				}
				return nil
			}),
		jsonCol("session_sessions",
			func(r *Row) any {
				s := r.Sessions
				if s == nil {
					return nil
				}
				return sessionsJSON{s.Turns, s.Sessions, s.Completed, s.TurnsNotSent, toDistJSON(s.TurnsCompleted), toDistJSON(s.Duration)}
			},
			func(r *Row, b []byte) error {
				var s sessionsJSON
				if err := json.Unmarshal(b, &s); err != nil {
					return err
				}
				r.Sessions = &stats.SessionSummary{Turns: s.Turns, Sessions: s.Sessions, Completed: s.Completed, TurnsNotSent: s.TurnsNotSent,
					TurnsCompleted: s.TurnsCompleted.dist(), Duration: s.Duration.dist()}
				return nil
			}),
		jsonCol("agent_per_step",
			func(r *Row) any {
				if len(r.AgentPerStep) == 0 {
					return nil
				}
				out := make([]stepJSON, len(r.AgentPerStep))
				for i, s := range r.AgentPerStep {
					out[i] = stepJSON{s.Step, s.Requests, s.Succeeded, toDistJSON(s.TTFT), JSONFloat(s.PromptTokensMean), JSONFloat(s.CachedTokensMean)}
				}
				return out
			},
			func(r *Row, b []byte) error {
				var in []stepJSON
				if err := json.Unmarshal(b, &in); err != nil {
					return err
				}
				r.AgentPerStep = make([]stats.StepSummary, len(in))
				for i, s := range in {
					r.AgentPerStep[i] = stats.StepSummary{Step: s.Step, Requests: s.Requests, Succeeded: s.Succeeded, TTFT: s.TTFT.dist(),
						PromptTokensMean: float64(s.PromptTokensMean), CachedTokensMean: float64(s.CachedTokensMean)}
				}
				return nil
			}),
	}
}

// jsonCol is a text column holding get's value as JSON ("" for nil); set reads a
// non-empty cell back. An empty cell (a row without the figures, or a ledger from before
// the column) leaves the row's zero value: no figures.
func jsonCol(name string, get func(*Row) any, set func(*Row, []byte) error) column {
	return column{name,
		func(r *Row) string {
			v := get(r)
			if v == nil {
				return ""
			}
			b, err := json.Marshal(v)
			if err != nil {
				panic("ledger: column " + name + ": " + err.Error()) // JSONFloat and ints only: cannot fail
			}
			return string(b)
		},
		func(r *Row, s string) error {
			if s == "" {
				return nil
			}
			return set(r, []byte(s))
		}, kindText}
}

// turnJSON is a stats.TurnSummary in a CSV cell.
type turnJSON struct {
	Turn             int       `json:"turn"`
	Requests         int       `json:"requests"`
	Succeeded        int       `json:"succeeded"`
	TTFT             distJSON  `json:"ttft_s"`
	E2E              distJSON  `json:"e2e_s"`
	PromptTokensMean JSONFloat `json:"prompt_tokens_mean"`
}

// sessionsJSON is a stats.SessionSummary in a CSV cell.
type sessionsJSON struct {
	Turns          int      `json:"turns"`
	Sessions       int      `json:"sessions"`
	Completed      int      `json:"completed"`
	TurnsNotSent   int      `json:"turns_not_sent"`
	TurnsCompleted distJSON `json:"turns_completed"`
	Duration       distJSON `json:"duration_s"`
}

// stepJSON is a stats.StepSummary in a CSV cell.
type stepJSON struct {
	Step             int       `json:"step"`
	Requests         int       `json:"requests"`
	Succeeded        int       `json:"succeeded"`
	TTFT             distJSON  `json:"ttft_s"`
	PromptTokensMean JSONFloat `json:"prompt_tokens_mean"`
	CachedTokensMean JSONFloat `json:"cached_tokens_mean"`
}

// distJSON is a stats.Dist in a CSV cell, its intervals included (stats.Interval writes
// its own unbounded ends as null).
type distJSON struct {
	N    int         `json:"n"`
	P50  JSONFloat   `json:"p50"`
	P90  JSONFloat   `json:"p90"`
	P95  JSONFloat   `json:"p95"`
	P99  JSONFloat   `json:"p99"`
	Mean JSONFloat   `json:"mean"`
	Min  JSONFloat   `json:"min"`
	Max  JSONFloat   `json:"max"`
	Std  JSONFloat   `json:"std"`
	CI   *distCIJSON `json:"ci,omitempty"`
}

type distCIJSON struct {
	Confidence JSONFloat      `json:"confidence"`
	P50        stats.Interval `json:"p50"`
	P90        stats.Interval `json:"p90"`
	P95        stats.Interval `json:"p95"`
	P99        stats.Interval `json:"p99"`
	Mean       stats.Interval `json:"mean"`
}

func toDistJSON(d stats.Dist) distJSON {
	j := distJSON{N: d.N, P50: JSONFloat(d.P50), P90: JSONFloat(d.P90), P95: JSONFloat(d.P95), P99: JSONFloat(d.P99),
		Mean: JSONFloat(d.Mean), Min: JSONFloat(d.Min), Max: JSONFloat(d.Max), Std: JSONFloat(d.Std)}
	if c := d.CI; c != nil {
		j.CI = &distCIJSON{JSONFloat(c.Confidence), c.P50, c.P90, c.P95, c.P99, c.Mean}
	}
	return j
}

func (j distJSON) dist() stats.Dist {
	d := stats.Dist{N: j.N, P50: float64(j.P50), P90: float64(j.P90), P95: float64(j.P95), P99: float64(j.P99),
		Mean: float64(j.Mean), Min: float64(j.Min), Max: float64(j.Max), Std: float64(j.Std)}
	if c := j.CI; c != nil {
		d.CI = &stats.DistCI{Confidence: float64(c.Confidence), P50: c.P50, P90: c.P90, P95: c.P95, P99: c.P99, Mean: c.Mean}
	}
	return d
}

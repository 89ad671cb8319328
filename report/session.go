package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/planrun/planrun/stats"
)

// sessionNote says how the session figures are counted (a Markdown line: code spans
// only, which the HTML report converts).
const sessionNote = "Turn k of a session sends every earlier turn's prompt and the server's own answer, then its own prompt: its prompt tokens (the server's count) and TTFT grow with k. Per turn: requests, successes, TTFT and E2E over that turn's successful requests, mean prompt tokens. Per session: duration = first turn's start to last turn's end, think times included, over completed sessions (every turn succeeded); a failed turn ends its session and its later turns are counted as not sent."

// turnCells is the per-turn table of the rows of session workloads; no body when none is.
func turnCells(rows []Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Turn", "Requests", "OK", "TTFT p50 (s)", "TTFT p90 (s)", "E2E p50 (s)", "Prompt tokens (mean)"}
	for _, r := range rows {
		for _, t := range r.Turns {
			body = append(body, []string{r.CellID, concurrency(r), fmt.Sprint(t.Turn), fmt.Sprint(t.Requests), fmt.Sprint(t.Succeeded),
				num(t.TTFT.P50, 1, 3), num(t.TTFT.P90, 1, 3), num(t.E2E.P50, 1, 3), num(t.PromptTokensMean, 1, 1)})
		}
	}
	return head, body
}

// sessionCells is the per-session table of the rows of session workloads.
func sessionCells(rows []Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Turns", "Sessions", "Completed", "Turns not sent", "Turns completed (mean)", "Duration p50 (s)", "Duration p90 (s)"}
	for _, r := range rows {
		if s := r.Sessions; s != nil {
			body = append(body, []string{r.CellID, concurrency(r), fmt.Sprint(s.Turns), fmt.Sprint(s.Sessions), fmt.Sprint(s.Completed),
				fmt.Sprint(s.TurnsNotSent), num(s.TurnsCompleted.Mean, 1, 2), num(s.Duration.P50, 1, 3), num(s.Duration.P90, 1, 3)})
		}
	}
	return head, body
}

// sessionTables writes the per-turn and per-session tables under their explanation;
// nothing when no row is of a session workload.
func sessionTables(b *strings.Builder, rows []Row) {
	head, body := turnCells(rows)
	if len(body) == 0 {
		return
	}
	b.WriteString("### Turns\n\n" + sessionNote + "\n\n")
	tableOf(b, head, body)
	b.WriteString("### Sessions\n\n")
	head, body = sessionCells(rows)
	tableOf(b, head, body)
}

// sessionHTMLTables are the per-turn and per-session tables of one cell's rows; none
// when they are not of a session workload.
func sessionHTMLTables(rows []Row) []htmlTable {
	turns := htmlTable{Title: "Turns", Note: inlineMarkdown(sessionNote)}
	if turns.Head, turns.Rows = turnCells(rows); len(turns.Rows) == 0 {
		return nil
	}
	sessions := htmlTable{Title: "Sessions"}
	sessions.Head, sessions.Rows = sessionCells(rows)
	return []htmlTable{turns, sessions}
}

// SessionFigures are one row's session figures in summary.json.
type SessionFigures struct {
	CellID             string        `json:"cell_id"`
	Concurrency        int           `json:"concurrency"`
	RequestRate        float64       `json:"request_rate,omitempty"`
	Turns              int           `json:"turns"`
	Sessions           int           `json:"sessions"`
	Completed          int           `json:"completed"`
	TurnsNotSent       int           `json:"turns_not_sent"`
	TurnsCompletedMean jsonFloat     `json:"turns_completed_mean"`
	DurationP50        jsonFloat     `json:"duration_p50_s"`
	DurationP90        jsonFloat     `json:"duration_p90_s"`
	PerTurn            []TurnFigures `json:"per_turn"`
}

// TurnFigures are one turn index's figures in summary.json (null: not measured).
type TurnFigures struct {
	Turn             int       `json:"turn"`
	Requests         int       `json:"requests"`
	Succeeded        int       `json:"succeeded"`
	TTFTP50          jsonFloat `json:"ttft_p50_s"`
	TTFTP90          jsonFloat `json:"ttft_p90_s"`
	TTFTMean         jsonFloat `json:"ttft_mean_s"`
	E2EP50           jsonFloat `json:"e2e_p50_s"`
	PromptTokensMean jsonFloat `json:"prompt_tokens_mean"`
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
			TurnsCompletedMean: jsonFloat(s.TurnsCompleted.Mean), DurationP50: jsonFloat(s.Duration.P50), DurationP90: jsonFloat(s.Duration.P90),
			PerTurn: make([]TurnFigures, 0, len(r.Turns))}
		for _, t := range r.Turns {
			f.PerTurn = append(f.PerTurn, turnFigures(t))
		}
		out = append(out, f)
	}
	return out
}

func turnFigures(t stats.TurnSummary) TurnFigures {
	return TurnFigures{Turn: t.Turn, Requests: t.Requests, Succeeded: t.Succeeded, TTFTP50: jsonFloat(t.TTFT.P50),
		TTFTP90: jsonFloat(t.TTFT.P90), TTFTMean: jsonFloat(t.TTFT.Mean), E2EP50: jsonFloat(t.E2E.P50),
		PromptTokensMean: jsonFloat(t.PromptTokensMean)}
}

// sessionDurationP50 is result.session_duration_p50_s: NaN without sessions.
func sessionDurationP50(r *Row) float64 {
	if r.Sessions == nil {
		return math.NaN()
	}
	return r.Sessions.Duration.P50
}

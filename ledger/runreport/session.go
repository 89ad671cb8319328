package runreport

import (
	"fmt"
	"strings"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// sessionNote says how the session figures are counted (a Markdown line: code spans
// only, which the HTML report converts).
const sessionNote = "Turn k of a session sends every earlier turn's prompt and the server's own answer, then its own prompt: its prompt tokens (the server's count) and TTFT grow with k. Per turn: requests, successes, TTFT and E2E over that turn's successful requests, mean prompt tokens. Per session: duration = first turn's start to last turn's end, think times included, over completed sessions (every turn succeeded); a failed turn ends its session and its later turns are counted as not sent."

// turnCells is the per-turn table of the rows of session workloads; no body when none is.
func turnCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Turn", "Requests", "OK", "TTFT p50 (s)", "TTFT p90 (s)", "E2E p50 (s)", "Prompt tokens (mean)"}
	for _, r := range rows {
		for _, t := range r.Turns {
			body = append(body, []string{r.CellID, concurrency(r), fmt.Sprint(t.Turn), fmt.Sprint(t.Requests), fmt.Sprint(t.Succeeded),
				mdtable.Num(t.TTFT.P50, 1, 3), mdtable.Num(t.TTFT.P90, 1, 3), mdtable.Num(t.E2E.P50, 1, 3), mdtable.Num(t.PromptTokensMean, 1, 1)})
		}
	}
	return head, body
}

// sessionCells is the per-session table of the rows of session workloads.
func sessionCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Turns", "Sessions", "Completed", "Turns not sent", "Turns completed (mean)", "Duration p50 (s)", "Duration p90 (s)"}
	for _, r := range rows {
		if s := r.Sessions; s != nil {
			body = append(body, []string{r.CellID, concurrency(r), fmt.Sprint(s.Turns), fmt.Sprint(s.Sessions), fmt.Sprint(s.Completed),
				fmt.Sprint(s.TurnsNotSent), mdtable.Num(s.TurnsCompleted.Mean, 1, 2), mdtable.Num(s.Duration.P50, 1, 3), mdtable.Num(s.Duration.P90, 1, 3)})
		}
	}
	return head, body
}

// sessionTables writes the per-turn and per-session tables under their explanation;
// nothing when no row is of a session workload.
func sessionTables(b *strings.Builder, rows []ledger.Row) {
	head, body := turnCells(rows)
	if len(body) == 0 {
		return
	}
	b.WriteString("### Turns\n\n" + sessionNote + "\n\n")
	mdtable.TableOf(b, head, body)
	b.WriteString("### Sessions\n\n")
	head, body = sessionCells(rows)
	mdtable.TableOf(b, head, body)
}

// sessionHTMLTables are the per-turn and per-session tables of one cell's rows; none
// when they are not of a session workload.
func sessionHTMLTables(rows []ledger.Row) []htmlTable {
	turns := htmlTable{Title: "Turns", Note: inlineMarkdown(sessionNote)}
	if turns.Head, turns.Rows = turnCells(rows); len(turns.Rows) == 0 {
		return nil
	}
	sessions := htmlTable{Title: "Sessions"}
	sessions.Head, sessions.Rows = sessionCells(rows)
	return []htmlTable{turns, sessions}
}

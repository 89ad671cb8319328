package runreport

import (
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// reasoningNote says how the reasoning table's figures are taken (a Markdown line).
const reasoningNote = "**TTFT** is the first generated token of any kind, reasoning included; **TTFO** the first answer token (reasoning excluded); the reasoning span is TTFO − TTFT of the requests that reasoned and then answered. Reasoning tokens are `usage.completion_tokens_details.reasoning_tokens` where the server reports them, else reasoning chunks counted (source `chunks`); answer tokens = output tokens − reasoning tokens. TPOT (answer) = (E2E − TTFO) / (answer tokens − 1)."

// hasReasoning reports whether a row measured reasoning output.
func hasReasoning(r ledger.Row) bool { return r.ReasoningTokens > 0 }

// reasoningCells is the reasoning table of the rows that reasoned; no body when none did.
func reasoningCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "TTFT p50 (s)", "TTFO p50 (s)", "TTFO p99 (s)", "Reasoning span p50 (s)",
		"TPOT p50 (ms)", "TPOT answer p50 (ms)", "Reasoning tokens", "Answer tokens", "Reasoning source"}
	for _, r := range rows {
		if !hasReasoning(r) {
			continue
		}
		body = append(body, []string{r.CellID, concurrency(r), mdtable.Num(r.TTFT.P50, 1, 3), mdtable.Num(r.TTFO.P50, 1, 3),
			mdtable.Num(r.TTFO.P99, 1, 3), mdtable.Num(r.ReasoningSpan.P50, 1, 3), mdtable.Num(r.TPOT.P50, 1000, 1), mdtable.Num(r.AnswerTPOT.P50, 1000, 1),
			strconv.Itoa(r.ReasoningTokens), strconv.Itoa(r.AnswerTokens), mdtable.Dash(r.ReasoningTokenSource)})
	}
	return head, body
}

// reasoningTable writes the reasoning table under its explanation; nothing when no row
// reasoned.
func reasoningTable(b *strings.Builder, rows []ledger.Row) {
	head, body := reasoningCells(rows)
	noteTable(b, "Reasoning", reasoningNote, head, body)
}

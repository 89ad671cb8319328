package report

import (
	"strconv"
	"strings"

	"github.com/planrun/planrun/stats"
)

// reasoningDists are the distributions of a reasoning model's rows: the time to the
// first answer token, the span it reasoned before it, and TPOT over the answer alone.
// They are named apart from TTFT and TPOT so a report never shows one as the other.
var reasoningDists = []rowDist{
	{"ttfo", "s", "time to first output (answer) token, reasoning excluded", 1, 3, func(r *Row) *stats.Dist { return &r.TTFO }},
	{"reasoning_span", "s", "first token to first answer token", 1, 3, func(r *Row) *stats.Dist { return &r.ReasoningSpan }},
	{"tpot_answer", "ms", "time per output token over the answer alone", 1000, 1, func(r *Row) *stats.Dist { return &r.AnswerTPOT }},
}

// reasoningColumns are the ledger columns of reasoningDists and the token split,
// appended after the earlier formats' columns so older ledgers upgrade in place.
func reasoningColumns() []column {
	var c []column
	for _, d := range reasoningDists {
		c = append(c, distCols(d.prefix, d.unit, d.scale, d.get)...)
		c = append(c, spreadCols(d.prefix, d.unit, d.scale, d.get)...)
	}
	return append(c,
		intCol("reasoning_tokens", func(r *Row) *int { return &r.ReasoningTokens }),
		intCol("answer_tokens", func(r *Row) *int { return &r.AnswerTokens }),
		strCol("reasoning_token_source", func(r *Row) *string { return &r.ReasoningTokenSource }))
}

// reasoningFields are result.reasoning_tokens and result.answer_tokens.
var reasoningFields = []ResultField{
	intField("reasoning_tokens", "reasoning tokens over the measured requests", func(r *Row) int { return r.ReasoningTokens }),
	intField("answer_tokens", "answer (non-reasoning) output tokens over the measured requests", func(r *Row) int { return r.AnswerTokens }),
}

// reasoningNote says how the reasoning table's figures are taken (a Markdown line).
const reasoningNote = "**TTFT** is the first generated token of any kind, reasoning included; **TTFO** the first answer token (reasoning excluded); the reasoning span is TTFO − TTFT of the requests that reasoned and then answered. Reasoning tokens are `usage.completion_tokens_details.reasoning_tokens` where the server reports them, else reasoning chunks counted (source `chunks`); answer tokens = output tokens − reasoning tokens. TPOT (answer) = (E2E − TTFO) / (answer tokens − 1)."

// hasReasoning reports whether a row measured reasoning output.
func hasReasoning(r Row) bool { return r.ReasoningTokens > 0 }

// reasoningCells is the reasoning table of the rows that reasoned; no body when none did.
func reasoningCells(rows []Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "TTFT p50 (s)", "TTFO p50 (s)", "TTFO p99 (s)", "Reasoning span p50 (s)",
		"TPOT p50 (ms)", "TPOT answer p50 (ms)", "Reasoning tokens", "Answer tokens", "Reasoning source"}
	for _, r := range rows {
		if !hasReasoning(r) {
			continue
		}
		body = append(body, []string{r.CellID, concurrency(r), num(r.TTFT.P50, 1, 3), num(r.TTFO.P50, 1, 3),
			num(r.TTFO.P99, 1, 3), num(r.ReasoningSpan.P50, 1, 3), num(r.TPOT.P50, 1000, 1), num(r.AnswerTPOT.P50, 1000, 1),
			strconv.Itoa(r.ReasoningTokens), strconv.Itoa(r.AnswerTokens), dash(r.ReasoningTokenSource)})
	}
	return head, body
}

// reasoningTable writes the reasoning table under its explanation; nothing when no row
// reasoned.
func reasoningTable(b *strings.Builder, rows []Row) {
	head, body := reasoningCells(rows)
	noteTable(b, "Reasoning", reasoningNote, head, body)
}

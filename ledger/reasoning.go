package ledger

import "github.com/planrun/planrun/stats"

// reasoningDists are the distributions of a reasoning model's rows: the time to the
// first answer token, the span it reasoned before it, and TPOT over the answer alone.
// They are named apart from TTFT and TPOT so a report never shows one as the other.
var reasoningDists = []RowDist{
	{"ttfo", "s", "time to first output (answer) token, reasoning excluded", 1, 3, func(r *Row) *stats.Dist { return &r.TTFO }},
	{"reasoning_span", "s", "first token to first answer token", 1, 3, func(r *Row) *stats.Dist { return &r.ReasoningSpan }},
	{"tpot_answer", "ms", "time per output token over the answer alone", 1000, 1, func(r *Row) *stats.Dist { return &r.AnswerTPOT }},
}

// reasoningColumns are the ledger columns of reasoningDists and the token split,
// appended after the earlier formats' columns so older ledgers upgrade in place.
func reasoningColumns() []column {
	var c []column
	for _, d := range reasoningDists {
		c = append(c, distCols(d.Prefix, d.Unit, d.Scale, d.Get)...)
		c = append(c, spreadCols(d.Prefix, d.Unit, d.Scale, d.Get)...)
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

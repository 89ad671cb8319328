package backends_test

import (
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// A reasoning model's figures: time to the first answer chunk, how long it reasoned
// before it, and the answer's own TPOT; none of them without the chunks they need.
func TestSampleReasoningFigures(t *testing.T) {
	type figures struct {
		TTFO         time.Duration
		TTFOOK       bool
		Span         time.Duration
		SpanOK       bool
		AnswerTPOT   time.Duration
		AnswerTPOTOK bool
		Answer       int
	}
	for _, c := range []struct {
		name string
		s    backends.Sample
		want figures
	}{
		// Reasoned 10–40 ms (4 tokens), answered 40–100 ms (4 tokens).
		{"reasoned then answered", backends.Sample{FirstToken: 10 * ms, FirstAnswer: 40 * ms, End: 100 * ms, OutputTokens: 8,
			ReasoningTokens: 4, Chunks: 4, ReasoningChunks: 4},
			figures{TTFO: 40 * ms, TTFOOK: true, Span: 30 * ms, SpanOK: true, AnswerTPOT: 20 * ms, AnswerTPOTOK: true, Answer: 4}},
		{"no reasoning", backends.Sample{FirstToken: 10 * ms, FirstAnswer: 10 * ms, End: 40 * ms, OutputTokens: 4, Chunks: 4},
			figures{TTFO: 10 * ms, TTFOOK: true, AnswerTPOT: 10 * ms, AnswerTPOTOK: true, Answer: 4}},
		// Two answer tokens: the least that has a TPOT.
		{"two answer tokens", backends.Sample{FirstToken: 10 * ms, FirstAnswer: 20 * ms, End: 50 * ms, OutputTokens: 3,
			ReasoningTokens: 1, Chunks: 2, ReasoningChunks: 1},
			figures{TTFO: 20 * ms, TTFOOK: true, Span: 10 * ms, SpanOK: true, AnswerTPOT: 30 * ms, AnswerTPOTOK: true, Answer: 2}},
		{"one answer token", backends.Sample{FirstToken: 10 * ms, FirstAnswer: 30 * ms, End: 30 * ms, OutputTokens: 3,
			ReasoningTokens: 2, Chunks: 1, ReasoningChunks: 2},
			figures{TTFO: 30 * ms, TTFOOK: true, Span: 20 * ms, SpanOK: true, Answer: 1}},
		{"reasoning only", backends.Sample{FirstToken: 10 * ms, End: 30 * ms, OutputTokens: 3, ReasoningTokens: 3, ReasoningChunks: 3},
			figures{}},
		// A server that counts more reasoning than output: no answer tokens, not fewer than none.
		{"reasoning over the count", backends.Sample{FirstToken: 10 * ms, FirstAnswer: 20 * ms, End: 30 * ms, OutputTokens: 2,
			ReasoningTokens: 5, Chunks: 1, ReasoningChunks: 1},
			figures{TTFO: 20 * ms, TTFOOK: true, Span: 10 * ms, SpanOK: true}},
		{"unstreamed", backends.Sample{FirstToken: 30 * ms, FirstAnswer: 30 * ms, End: 30 * ms, OutputTokens: 8, ReasoningTokens: 4,
			Chunks: 1, ReasoningChunks: 1, Unstreamed: true},
			figures{TTFO: 30 * ms, Answer: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f figures
			f.TTFO, f.TTFOOK = c.s.TTFO()
			f.Span, f.SpanOK = c.s.ReasoningSpan()
			f.AnswerTPOT, f.AnswerTPOTOK = c.s.AnswerTPOT()
			f.Answer = c.s.AnswerTokens()
			if f != c.want {
				t.Fatalf("\n got %+v\nwant %+v", f, c.want)
			}
		})
	}
}

package apply

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/servers/mockserver"
)

const messagesPlan = `
variable "url" { type = string }
backend "anthropic" "mock" { url = "${var.url}/v1" }
workload "think" {
  prompt_tokens = 16
  max_tokens    = 40
  concurrency   = [2]
  warmup_runs   = 0
  repeat_runs   = 2
  requests      = 4
  think         = true
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.anthropic.mock]
  workload = [workload.think]
  model_id = "mock"
}
`

// The acceptance check of the Messages API adapter, as TestReasoningAgainstTruth is the
// OpenAI path's: against the mock's known timing (its truth per request: when it wrote
// each chunk), TTFT (the first thinking delta), TTFO (the first text delta) and every
// delta's arrival are within 1% of the truth per request, TTFT, TTFO and ITL within 1%
// at p50, and the token counts are the server's usage exactly, with the source stated.
// Deltas a loaded client read at once share that read's stamp (readSpans).
func TestMessagesAgainstTruth(t *testing.T) {
	const reasoning, answer = 20, 20
	srv := mockserver.New(mockserver.Config{TTFT: 300 * time.Millisecond, TPOT: 10 * time.Millisecond,
		ReasoningTokens: reasoning, RecordTruth: true, TokensPerChunk: 2})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, messagesPlan, hs.URL)
	res, recs := runSamples(t, p, cells)
	within := func(what, id string, got time.Duration, want span) {
		if float64(got) < 0.99*float64(want.lo) || float64(got) > 1.01*float64(want.hi) {
			t.Errorf("%s %s = %v, truth %v … %v: off by more than 1%%", id, what, got, want.lo, want.hi)
		}
	}
	var ttfoLo, ttfoHi, ttftLo, ttftHi, gapLo, gapHi []float64
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || r.Err != nil {
			t.Fatalf("%s: truth %v, error %v", r.ID, ok, r.Err)
		}
		ttft, _ := r.TTFT()
		ttfo, ok := r.TTFO()
		if !ok {
			t.Fatalf("%s: no TTFO", r.ID)
		}
		// One arrival per chunk part: a chunk straddling the reasoning's end is a
		// thinking delta and a text delta, written together; the text delta is the first
		// answer.
		var written []span
		answerAt := -1
		for _, c := range tr.Chunks {
			sp := span{c.Writing.Sub(r.Start), c.Written.Sub(r.Start)}
			if c.Reasoning > 0 {
				written = append(written, sp)
			}
			if c.Tokens > c.Reasoning {
				if answerAt < 0 {
					answerAt = len(written)
				}
				written = append(written, sp)
			}
		}
		if answerAt < 0 {
			t.Fatalf("%s: no answer chunk written", r.ID)
		}
		truthAt := readSpans(t, r.ID, written, r.ChunkArrivals, tr.Ended.Sub(r.Start))
		wantTTFT, wantTTFO := truthAt[0], truthAt[answerAt]
		within("TTFT", r.ID, ttft, wantTTFT)
		within("TTFO", r.ID, ttfo, wantTTFO)
		ttftLo, ttftHi = append(ttftLo, wantTTFT.lo.Seconds()), append(ttftHi, wantTTFT.hi.Seconds())
		ttfoLo, ttfoHi = append(ttfoLo, wantTTFO.lo.Seconds()), append(ttfoHi, wantTTFO.hi.Seconds())
		for i, at := range r.ChunkArrivals {
			within("delta "+strconv.Itoa(i), r.ID, at, truthAt[i])
		}
		for i := range r.ITL() {
			gapLo = append(gapLo, max(truthAt[i+1].lo-truthAt[i].hi, 0).Seconds())
			gapHi = append(gapHi, (truthAt[i+1].hi - truthAt[i].lo).Seconds())
		}
		if r.OutputTokens != tr.OutputTokens || r.PromptTokens != tr.PromptTokens || r.TokenSource != backends.TokensUsage ||
			r.ReasoningTokenSource != backends.TokensChunks || r.FinishReason != "length" {
			t.Errorf("%s: tokens %d prompt %d source %q reasoning source %q finish %q; truth %d, %d, usage, chunks (the Messages API has no reasoning count), length",
				r.ID, r.OutputTokens, r.PromptTokens, r.TokenSource, r.ReasoningTokenSource, r.FinishReason, tr.OutputTokens, tr.PromptTokens)
		}
	}
	if len(res.Rows) != 1 || len(recs) != 8 {
		t.Fatalf("%d rows, %d records", len(res.Rows), len(recs))
	}
	row := res.Rows[0]
	for _, c := range []struct {
		what   string
		got    float64
		lo, hi []float64
	}{{"ttft", row.TTFT.P50, ttftLo, ttftHi}, {"ttfo", row.TTFO.P50, ttfoLo, ttfoHi}, {"itl", row.ITL.P50, gapLo, gapHi}} {
		if lo, hi := median(c.lo), median(c.hi); c.got < 0.99*lo || c.got > 1.01*hi {
			t.Errorf("%s p50 %.6f s, truth median %.6f … %.6f", c.what, c.got, lo, hi)
		}
	}
	if row.OutputTokens != 8*(reasoning+answer) || row.Succeeded != 8 {
		t.Errorf("row: %d output tokens, %d ok; want %d, 8", row.OutputTokens, row.Succeeded, 8*(reasoning+answer))
	}
}

// examples/messages-api.hcl runs on the mock as its comment says: every request
// succeeds, with the server's usage as its token count and thinking before the text.
func TestMessagesExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: 200 * time.Microsecond, ReasoningTokens: 8})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/messages-api.hcl", "url="+srv.URL+"/v1")
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 2 || len(recs) != 64 {
		t.Fatalf("%d rows, %d records; want 2 levels of 2 runs of 16", len(res.Rows), len(recs))
	}
	for _, r := range res.Rows {
		if r.Succeeded != r.Requests || r.OutputTokens != 32*48 || !(r.TTFO.P50 > r.TTFT.P50) {
			t.Errorf("%s: %d/%d ok, %d output tokens (want %d), TTFT %v TTFO %v", r.CellID, r.Succeeded, r.Requests, r.OutputTokens, 32*48, r.TTFT.P50, r.TTFO.P50)
		}
	}
	for _, r := range recs {
		if r.TokenSource != backends.TokensUsage || r.ReasoningChunks != 8 {
			t.Fatalf("%s: token source %q, %d reasoning chunks", r.ID, r.TokenSource, r.ReasoningChunks)
		}
	}
}

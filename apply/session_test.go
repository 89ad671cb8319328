package apply

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/gpu"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/mockserver"
)

// examples/multi-turn.hcl against the mock, checked from the server's side: turn k of
// every session arrives carrying 2k−1 messages, and its prompt (the mock counts words)
// is exactly the previous turn's prompt, plus the answer the server gave it, plus a new
// prompt as long as the first: the history is the server's own answers, growing.
func TestApplyMultiTurnExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{RecordTruth: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/multi-turn.hcl", "url="+srv.URL+"/v1", "model=mock")
	res, recs := runSamples(t, p, cells)
	s := p.Workloads[0].Session
	const levels, runs = 2, 2
	if len(recs) != levels*runs*s.Sessions*s.Turns {
		t.Fatalf("%d measured requests, want %d", len(recs), levels*runs*s.Sessions*s.Turns)
	}
	for _, r := range recs {
		if r.Session < 1 || r.Session > s.Sessions || r.Turn < 1 || r.Turn > s.Turns || r.Err != nil {
			t.Fatalf("%s: session %d turn %d, error %v", r.ID, r.Session, r.Turn, r.Err)
		}
	}

	// A session's turns share their first message, so the prompt head names the session
	// (and its namesake at the other level, which runs after it); its turns arrive one
	// after another.
	bySession := map[string][]mockserver.Truth{}
	for _, tr := range mock.Truths() {
		bySession[tr.Prompt] = append(bySession[tr.Prompt], tr)
	}
	sessions := 0
	for head, all := range bySession {
		if all[0].Messages == 1 && len(all)%s.Turns != 0 {
			continue // calibration probes
		}
		slices.SortFunc(all, func(a, b mockserver.Truth) int { return a.Received.Compare(b.Received) })
		for trs := range slices.Chunk(all, s.Turns) {
			sessions++
			checkTurns(t, head, trs, s.Turns)
		}
	}
	if want := levels * (1 + runs) * s.Sessions; sessions != want {
		t.Errorf("%d sessions reached the server, want %d (warm-up runs included)", sessions, want)
	}

	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK || r.Sessions == nil || r.Sessions.Completed != runs*s.Sessions || len(r.Turns) != s.Turns {
			t.Fatalf("c=%d: status %s, sessions %+v, %d turns", r.Concurrency, r.Status, r.Sessions, len(r.Turns))
		}
		for k := 1; k < len(r.Turns); k++ {
			if r.Turns[k].PromptTokensMean <= r.Turns[k-1].PromptTokensMean || r.Turns[k].Requests != runs*s.Sessions {
				t.Fatalf("c=%d turn %d: %+v after %+v: want more prompt tokens, every session's turn", r.Concurrency, k+1, r.Turns[k], r.Turns[k-1])
			}
		}
	}
}

// checkTurns holds one session's requests, as the server received them, to the growing
// history: turn k carries 2k−1 messages, and its prompt is the previous turn's prompt
// plus that turn's answer plus a new prompt as long as the first.
func checkTurns(t *testing.T, head string, trs []mockserver.Truth, turns int) {
	t.Helper()
	if len(trs) != turns {
		t.Fatalf("session %q sent %d turns, want %d", head, len(trs), turns)
	}
	for k, tr := range trs {
		if tr.Messages != 2*(k+1)-1 {
			t.Fatalf("session %q turn %d carried %d messages, want %d", head, k+1, tr.Messages, 2*(k+1)-1)
		}
		if k == 0 {
			continue
		}
		prev := trs[k-1]
		if want := prev.PromptTokens + prev.OutputTokens + trs[0].PromptTokens; tr.PromptTokens != want {
			t.Fatalf("session %q turn %d: %d prompt tokens, want %d (turn %d's %d + its answer's %d + a new prompt of %d)",
				head, k+1, tr.PromptTokens, want, k, prev.PromptTokens, prev.OutputTokens, trs[0].PromptTokens)
		}
	}
}

const realSessionPlan = `
variable "url" { type = string }
backend "ollama" "real" { url = var.url }
backend "openai" "real" { url = "${var.url}/v1" }
workload "chat" {
  prompt_tokens = 16
  max_tokens    = 8
  concurrency   = 2
  warmup_runs   = 0
  repeat_runs   = 1
  temperature   = 0
  session {
    turns      = 3
    think_time = "10ms"
    sessions   = 2
  }
}
matrix "tiny" {
  model    = ["tiny"]
  tool     = [backend.ollama.real, backend.openai.real]
  workload = [workload.chat]
  model_id = "tiny"
}
`

// Sessions on the real Ollama, native chat and /v1: by the server's own count, each
// turn's prompt holds the previous turn's prompt and the answer the server gave it,
// which it can only do if that answer went back as history.
func TestRealOllamaSessions(t *testing.T) {
	s := realOllama(t)
	p, cells := loadPlan(t, realSessionPlan, s.URL)
	res, recs := runSamples(t, p, cells)
	if len(recs) != 2*2*3 {
		t.Fatalf("%d measured requests, want 2 cells × 2 sessions × 3 turns", len(recs))
	}
	type key struct {
		cell          string
		session, turn int
	}
	byTurn := map[key]ledger.RequestRecord{}
	for _, r := range recs {
		if r.Err != nil || r.PromptTokens == 0 {
			t.Fatalf("%s %s: error %v, %d prompt tokens", r.CellID, r.ID, r.Err, r.PromptTokens)
		}
		byTurn[key{r.CellID, r.Session, r.Turn}] = r
	}
	for k, r := range byTurn {
		if k.turn == 1 {
			continue
		}
		prev, ok := byTurn[key{k.cell, k.session, k.turn - 1}]
		first := byTurn[key{k.cell, k.session, 1}]
		t.Logf("%s session %d turn %d: %d prompt tokens after %d + %d", k.cell, k.session, k.turn, r.PromptTokens, prev.PromptTokens, prev.OutputTokens)
		// The answer goes back as text, which the server tokenizes anew (not always into
		// as many tokens as it generated), so it must add tokens beyond the two prompts.
		if !ok || r.PromptTokens < prev.PromptTokens+prev.OutputTokens || r.PromptTokens <= prev.PromptTokens+first.PromptTokens {
			t.Errorf("%s session %d turn %d: %d prompt tokens, want at least turn %d's %d + its answer's %d, and more than that prompt and a new one (%d)",
				k.cell, k.session, k.turn, r.PromptTokens, k.turn-1, prev.PromptTokens, prev.OutputTokens, first.PromptTokens)
		}
	}
	for _, r := range res.Rows {
		if r.Sessions == nil || r.Sessions.Completed != 2 || len(r.Turns) != 3 {
			t.Errorf("%s: sessions %+v, %d turns", r.CellID, r.Sessions, len(r.Turns))
		}
	}
}

// A session whose last turn, history included, would not fit the model's context (the
// mock's 4096 tokens) fails its cell before any of its requests is sent, though each
// turn's own prompt and answer would fit.
func TestApplyRefusesSessionsPastTheContext(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 1000
  max_tokens    = 500
  warmup_runs   = 0
  repeat_runs   = 1
  session {
    turns = 3
  }
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	// The last turn: 3 prompts and 2 answers of history (4000 tokens), 500 out.
	if len(res.Cells) != 1 || res.Cells[0].Status != "failed" || !strings.Contains(res.Cells[0].Notes, "4500 tokens (4000 prompt + 500 output)") {
		t.Fatalf("cells = %+v", res.Cells)
	}
	if n := mock.Stats().Requests; n != 1 {
		t.Fatalf("the server got %d requests, want only the probe's", n)
	}
}

package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/planrun/planrun/backends"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
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

// Sessions on the real Ollama, native chat and /v1, checked from the server's side: a
// proxy keeps what each turn sent (its messages) and the server's prompt count of it.
// Turn k's count must be turn k−1's, plus the answer it got back, plus the new prompt,
// each as the server counts that text alone: so the answer went back as history, and
// nothing is assumed about how long the tiny model's answers are (an answer shorter
// than the prompt failed the earlier check "more than turn 1 and a prompt its size").
func TestRealOllamaSessions(t *testing.T) {
	s := realOllama(t)
	seen := &turnLog{}
	proxy := httptest.NewServer(seen.proxy(t, s.URL))
	defer proxy.Close()
	p, cells := loadPlan(t, realSessionPlan, proxy.URL)
	res, recs := runSamples(t, p, cells)
	if len(recs) != 2*2*3 {
		t.Fatalf("%d measured requests, want 2 cells × 2 sessions × 3 turns", len(recs))
	}
	var counts []int
	for _, r := range recs {
		if r.Err != nil || r.PromptTokens == 0 {
			t.Fatalf("%s %s: error %v, %d prompt tokens", r.CellID, r.ID, r.Err, r.PromptTokens)
		}
		counts = append(counts, r.PromptTokens)
	}
	// alone is what a text costs when it starts a prompt and not in a turn's middle: the
	// server's BOS token (the count of an empty prompt) and the leading space the SPM
	// tokenizer puts before a whole prompt (one token: seen on every text measured alone).
	alone := ownTokens(t, s.URL, s.Model, "") + 1
	turns, answered := 0, 0
	var seenCounts, seenNew []int
	for head, trs := range seen.sessions() {
		if len(trs) == 1 {
			continue // a calibration probe
		}
		if len(trs) != 3 {
			t.Fatalf("session %.40q sent %d turns, want 3", head, len(trs))
		}
		for k, tr := range trs {
			seenCounts = append(seenCounts, tr.promptTokens)
			if len(tr.messages) != 2*k+1 {
				t.Fatalf("session %.40q turn %d carried %d messages, want %d", head, k+1, len(tr.messages), 2*k+1)
			}
			if k == 0 {
				seenNew = append(seenNew, tr.promptTokens)
				continue
			}
			prev := trs[k-1]
			// What the turn added to its conversation, by the server's own counts.
			seenNew = append(seenNew, tr.promptTokens-prev.promptTokens-prev.outputTokens)
			answer, prompt := tr.messages[2*k-1], tr.messages[2*k]
			if answer.Role != "assistant" || answer.Content != prev.answer || prompt.Role != "user" {
				t.Fatalf("session %.40q turn %d: history ends %+v then %+v; turn %d's answer was %q", head, k+1, answer, prompt.Role, k, prev.answer)
			}
			// Each turn's new prompt and the answer it sends back, by their own counts.
			a, n := ownTokens(t, s.URL, s.Model, answer.Content), ownTokens(t, s.URL, s.Model, prompt.Content)
			want := prev.promptTokens + (a - alone) + (n - alone)
			t.Logf("%s session %.24q turn %d: %d prompt tokens; turn %d's %d + answer %d + new prompt %d (own counts less %d) = %d",
				tr.path, head, k+1, tr.promptTokens, k, prev.promptTokens, a-alone, n-alone, alone, want)
			// Text joined to text may tokenize a token shorter or longer at each seam.
			if d := tr.promptTokens - want; d < -2 || d > 2 {
				t.Errorf("%s session %.40q turn %d: %d prompt tokens, want %d ±2 (turn %d's %d + the answer's own %d + the new prompt's own %d)",
					tr.path, head, k+1, tr.promptTokens, want, k, prev.promptTokens, a-alone, n-alone)
			}
			turns++
			if a-alone > 2 {
				answered++
			}
		}
	}
	if turns != 2*2*2 || answered == 0 {
		t.Errorf("%d later turns checked (want 8), %d with an answer of more than 2 tokens (want some: else the check cannot see it)", turns, answered)
	}
	slices.Sort(counts)
	slices.Sort(seenCounts)
	if !slices.Equal(counts, seenCounts) {
		t.Errorf("the request records' prompt counts %v are not the server's %v", counts, seenCounts)
	}
	// Each turn's record carries the prompt tokens it added (new_prompt_tokens): the
	// same figures the server's counts give, turn by turn, and none uncounted.
	var recNew []int
	for _, r := range recs {
		if r.NewPromptTokens <= 0 {
			t.Errorf("%s %s session %d turn %d: new prompt tokens %d", r.CellID, r.ID, r.Session, r.Turn, r.NewPromptTokens)
		}
		recNew = append(recNew, r.NewPromptTokens)
	}
	slices.Sort(recNew)
	slices.Sort(seenNew)
	if !slices.Equal(recNew, seenNew) {
		t.Errorf("the request records' new prompt tokens %v are not what the server's counts give %v", recNew, seenNew)
	}
	for _, r := range res.Rows {
		if r.Sessions == nil || r.Sessions.Completed != 2 || len(r.Turns) != 3 {
			t.Errorf("%s: sessions %+v, %d turns", r.CellID, r.Sessions, len(r.Turns))
		}
	}
}

// turnLog keeps, for each chat request that passes its proxy, what the server saw.
type turnLog struct {
	mu    sync.Mutex
	turns []seenTurn
}

// seenTurn is one chat request: its messages, the server's prompt count and the answer text.
type seenTurn struct {
	path         string
	messages     []backends.Message
	promptTokens int
	outputTokens int
	answer       string
}

// proxy forwards to the server at url, keeping each chat request's messages and reading
// its streamed answer (Ollama's NDJSON or OpenAI's SSE) as the client did.
func (l *turnLog) proxy(t *testing.T, url string) http.Handler {
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct{ Messages []backends.Message }
		if !strings.HasSuffix(r.URL.Path, "/chat") && !strings.HasSuffix(r.URL.Path, "/chat/completions") || json.Unmarshal(body, &req) != nil {
			rp.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		st := seenTurn{path: r.URL.Path, messages: req.Messages}
		for line := range strings.Lines(rec.Body.String()) {
			var c struct {
				Message         backends.Message
				PromptEvalCount int `json:"prompt_eval_count"`
				EvalCount       int `json:"eval_count"`
				Choices         []struct{ Delta backends.Message }
				Usage           struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
				}
			}
			if json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "data: ")), &c) != nil {
				continue
			}
			st.answer += c.Message.Content
			for _, ch := range c.Choices {
				st.answer += ch.Delta.Content
			}
			st.promptTokens = max(st.promptTokens, c.PromptEvalCount, c.Usage.PromptTokens)
			st.outputTokens = max(st.outputTokens, c.EvalCount, c.Usage.CompletionTokens)
		}
		l.mu.Lock()
		l.turns = append(l.turns, st)
		l.mu.Unlock()
	})
}

// sessions are the requests by endpoint and first message (one session's turns share
// it), each session's in the order of their message counts.
func (l *turnLog) sessions() map[string][]seenTurn {
	out := map[string][]seenTurn{}
	for _, tr := range l.turns {
		if len(tr.messages) > 0 {
			k := tr.path + " " + tr.messages[0].Content
			out[k] = append(out[k], tr)
		}
	}
	for _, trs := range out {
		slices.SortFunc(trs, func(a, b seenTurn) int { return len(a.messages) - len(b.messages) })
	}
	return out
}

// ownTokens is the server's prompt count of text as a chat of one user message.
func ownTokens(t *testing.T, url, model, text string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": model, "stream": false, "messages": []backends.Message{{Role: "user", Content: text}},
		"options": map[string]any{"num_predict": 1, "temperature": 0}})
	resp, err := http.Post(url+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var done struct {
		PromptEvalCount int `json:"prompt_eval_count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&done); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("counting %q: %s, %v", text, resp.Status, err)
	}
	return done.PromptEvalCount
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

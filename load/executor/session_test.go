package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// chatBackend answers every request with a text naming it, keeps every request, and
// fails the requests whose prompt fail says so.
type chatBackend struct {
	mu   sync.Mutex
	reqs map[string]backends.Request
	at   map[string][2]time.Time // start, end
	fail func(prompt string) bool
	// count makes it count tokens as a chat server would: a prompt is its messages' words
	// plus 2 a message (the template), an answer its words.
	count bool
}

func (c *chatBackend) Kind() string { return "fake" }
func (c *chatBackend) Name() string { return "fake.chat" }
func (c *chatBackend) Probe(context.Context, []string) backends.ProbeResult {
	return backends.ProbeResult{}
}
func (c *chatBackend) Do(_ context.Context, req backends.Request) backends.Sample {
	start := time.Now()
	s := backends.Sample{ID: req.ID, Start: start, Chunks: 1, OutputTokens: 1}
	if req.KeepText {
		s.Text = "answer to " + req.ID
	}
	if c.count {
		s.Text = "answer to " + req.ID
		s.OutputTokens = len(strings.Fields(s.Text))
		for _, m := range req.Messages() {
			s.PromptTokens += len(strings.Fields(m.Content)) + 2
		}
	}
	if c.fail != nil && c.fail(req.Prompt) {
		s.Err = &backends.Error{Class: backends.ErrServer, Message: "boom"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs[req.ID] = req
	c.at[req.ID] = [2]time.Time{start, time.Now()}
	return s
}

func newChat() *chatBackend {
	return &chatBackend{reqs: map[string]backends.Request{}, at: map[string][2]time.Time{}}
}

// Turn k of a session carries the 2k−2 messages before it (each earlier prompt and the
// server's own answer to it, in order), turns are sent one after another after the
// think time, and every event names its session and turn.
func TestSessionsCarryHistory(t *testing.T) {
	b := newChat()
	const sessions, turns, think = 3, 4, 5 * time.Millisecond
	lv := LevelSpec{Concurrency: 2, Requests: sessions * turns, RepeatRuns: 1, Prompts: &Prompts{Words: 3, Salt: "s"},
		Request: backends.Request{Model: "m"}, Session: &SessionSpec{Turns: turns, ThinkTime: think, Sessions: sessions}}
	var events []Event
	res := RunLevel(context.Background(), b, lv, Options{OnRequest: func(ev Event) {
		s := *ev.Sample // valid only during the call
		ev.Sample = &s
		events = append(events, ev)
	}})
	if len(res.Runs) != 1 || len(res.Runs[0].Samples) != sessions*turns || len(events) != sessions*turns {
		t.Fatalf("runs %d, events %d: want one run of %d requests", len(res.Runs), len(events), sessions*turns)
	}
	seen := map[[2]int]bool{}
	for _, ev := range events {
		n := (ev.Session-1)*turns + ev.Turn - 1
		id := fmt.Sprintf("run0/req%d", n)
		if ev.Sample.ID != id || ev.Session < 1 || ev.Session > sessions || ev.Turn < 1 || ev.Turn > turns {
			t.Fatalf("event session %d turn %d has sample %s, want %s", ev.Session, ev.Turn, ev.Sample.ID, id)
		}
		seen[[2]int{ev.Session, ev.Turn}] = true
		req := b.reqs[id]
		msgs := req.Messages()
		if len(msgs) != 2*ev.Turn-1 || req.KeepText != (ev.Turn < turns) {
			t.Fatalf("%s: %d messages, keep text %v; want %d, %v", id, len(msgs), req.KeepText, 2*ev.Turn-1, ev.Turn < turns)
		}
		for j := 1; j < ev.Turn; j++ {
			prev := fmt.Sprintf("run0/req%d", n-ev.Turn+j)
			user, answer := msgs[2*j-2], msgs[2*j-1]
			if user.Role != "user" || user.Content != b.reqs[prev].Prompt || answer.Role != "assistant" || answer.Content != "answer to "+prev {
				t.Fatalf("%s: messages %d-%d are %+v %+v, want %s's prompt and answer", id, 2*j-2, 2*j-1, user, answer, prev)
			}
			if gap := b.at[fmt.Sprintf("run0/req%d", n-ev.Turn+j+1)][0].Sub(b.at[prev][1]); gap < think {
				t.Fatalf("%s: next turn sent %v after its answer, before the %v think time", prev, gap, think)
			}
		}
	}
	if len(seen) != sessions*turns {
		t.Errorf("%d distinct (session, turn) pairs, want %d", len(seen), sessions*turns)
	}
}

// A failed turn ends its session: the later turns of that session are not sent, and
// the other sessions go on.
func TestFailedTurnEndsSession(t *testing.T) {
	b := newChat()
	b.fail = func(p string) bool { return strings.Contains(p, "FAIL") }
	const turns = 3
	lv := LevelSpec{Concurrency: 1, Requests: 2 * turns, RepeatRuns: 1, Request: backends.Request{Model: "m"},
		Session: &SessionSpec{Turns: turns, Sessions: 2},
		// Request 1 is session 1's turn 2.
		Shapes:  []Shape{{Text: "ok"}, {Text: "FAIL"}, {Text: "ok"}, {Text: "ok"}, {Text: "ok"}, {Text: "ok"}},
		Prompts: &Prompts{Salt: "s"}}
	res := RunLevel(context.Background(), b, lv, Options{})
	var ids []string
	for _, s := range res.Runs[0].Samples {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "run0/req0 run0/req1 run0/req3 run0/req4 run0/req5" {
		t.Errorf("requests sent %q: want session 1 to stop after its failed turn 2", got)
	}
}

// A session's first turn goes out at once: the think time comes between turns, not
// before the first. (A day's think time: a wait before turn 1 would outlast the
// context, and the turn would not be sent.)
func TestFirstTurnWithoutThinkTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lv := LevelSpec{Concurrency: 1, Requests: 1, RepeatRuns: 1, Prompts: &Prompts{Words: 3, Salt: "s"},
		Request: backends.Request{Model: "m"}, Session: &SessionSpec{Turns: 1, ThinkTime: 24 * time.Hour, Sessions: 1}}
	res := RunLevel(ctx, newChat(), lv, Options{})
	if len(res.Runs) != 1 || len(res.Runs[0].Samples) != 1 || res.Runs[0].Samples[0].Err != nil {
		t.Fatalf("runs %+v: want the one turn sent and answered", res.Runs)
	}
}

// Each turn records the prompt tokens it added to its conversation: the server's count
// less what the last turn's prompt and answer already held, so its own new prompt and the
// template around the two new messages (turn 1: its one message).
func TestSessionNewPromptTokens(t *testing.T) {
	b := newChat()
	b.count = true
	const turns = 3
	lv := LevelSpec{Concurrency: 1, Requests: 2 * turns, RepeatRuns: 1, Request: backends.Request{Model: "m"},
		Session: &SessionSpec{Turns: turns, Sessions: 2},
		Shapes: []Shape{{Text: "one"}, {Text: "two words"}, {Text: "three words here"},
			{Text: "a b c d"}, {Text: "e"}, {Text: "f g"}},
		Prompts: &Prompts{Salt: "s"}}
	var events []Event
	RunLevel(context.Background(), b, lv, Options{OnRequest: func(ev Event) {
		s := *ev.Sample // valid only during the call
		ev.Sample = &s
		events = append(events, ev)
	}})
	if len(events) != 2*turns {
		t.Fatalf("%d events, want %d", len(events), 2*turns)
	}
	for _, ev := range events {
		own := len(strings.Fields(b.reqs[ev.ID].Prompt)) // the prompt as sent, marker included
		want := own + 2
		if ev.Turn > 1 {
			want += 2 // the last answer's message template: its words are the carried answer
		}
		if ev.NewPromptTokens != want {
			t.Errorf("%s (session %d turn %d): new prompt tokens %d, want %d (own %d words)", ev.ID, ev.Session, ev.Turn, ev.NewPromptTokens, want, own)
		}
	}
}

// A server that counts no prompt tokens leaves the new prompt count at 0, never a guess.
func TestSessionNewPromptTokensUncounted(t *testing.T) {
	b := newChat()
	lv := LevelSpec{Concurrency: 1, Requests: 2, RepeatRuns: 1, Request: backends.Request{Model: "m"},
		Session: &SessionSpec{Turns: 2, Sessions: 1}, Prompts: &Prompts{Words: 3, Salt: "s"}}
	RunLevel(context.Background(), b, lv, Options{OnRequest: func(ev Event) {
		if ev.NewPromptTokens != 0 {
			t.Errorf("%s: new prompt tokens %d from a server that counted none", ev.ID, ev.NewPromptTokens)
		}
	}})
}

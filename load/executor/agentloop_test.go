package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
)

// toolBackend calls the tool "search" while the request's conversation holds fewer
// than calls tools' results, then answers in text; it keeps every request.
type toolBackend struct {
	chatBackend
	calls int
	// perAnswer is the calls each tool-calling answer makes (0 means 1).
	perAnswer int
	mu        sync.Mutex
	sent      []backends.Request
}

func (b *toolBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	s := b.chatBackend.Do(ctx, req)
	results := 0
	for _, m := range req.Messages() {
		if m.Role == backends.RoleTool {
			results++
		}
	}
	if results < b.calls {
		s.Text = ""
		for i := range max(b.perAnswer, 1) {
			s.ToolCalls = append(s.ToolCalls, backends.ToolCall{Index: i, Name: "search", Args: `{"q":"x"}`, ArgsJSON: true})
		}
	}
	b.mu.Lock()
	b.sent = append(b.sent, req)
	b.mu.Unlock()
	return s
}

func newToolBackend(calls int) *toolBackend {
	return &toolBackend{chatBackend: *newChat(), calls: calls}
}

func agentLevel(sessions, turns, maxSteps int) LevelSpec {
	return LevelSpec{Concurrency: 2, Requests: sessions * turns, RepeatRuns: 1, Prompts: &Prompts{Words: 3, Salt: "s"},
		Request: backends.Request{Model: "m"}, Session: &SessionSpec{Turns: turns, Sessions: sessions,
			Agent: &AgentSpec{MaxSteps: maxSteps, ResultTokens: dataset.Fixed(4), ToolLatencyMs: dataset.Fixed(5), Seed: 1}}}
}

func collect(events *[]Event) func(Event) {
	var mu sync.Mutex
	return func(ev Event) {
		s := *ev.Sample // valid only during the call
		ev.Sample = &s
		mu.Lock()
		*events = append(*events, ev)
		mu.Unlock()
	}
}

// A turn whose model calls a tool goes on step by step: each step carries the
// assistant's call and the tool's result, answered under the call's id, after the
// tool's latency; the turn ends at the answer without a call, and the next turn starts
// from the whole loop's conversation.
func TestAgentLoopAnswersToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name            string
		calls, per, max int
		wantSteps       int
		limit           bool
	}{
		{"answers after two calls", 2, 1, 8, 3, false},
		{"two calls an answer", 2, 2, 8, 2, false},
		{"step limit", 5, 1, 3, 3, true},
		{"no call", 0, 1, 8, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newToolBackend(tc.calls)
			b.perAnswer = tc.per
			lv := agentLevel(2, 1, tc.max)
			var events []Event
			RunLevel(context.Background(), b, lv, Options{OnRequest: collect(&events)})
			if len(events) != 2*tc.wantSteps {
				t.Fatalf("%d requests, want %d steps for each of 2 sessions", len(events), tc.wantSteps)
			}
			for _, ev := range events {
				if ev.Step < 1 || ev.Step > tc.wantSteps || ev.Turn != 1 {
					t.Fatalf("%s: step %d turn %d", ev.ID, ev.Step, ev.Turn)
				}
				if want := fmt.Sprintf("run0/req%d", ev.Session-1); ev.Step > 1 {
					want += fmt.Sprintf("/step%d", ev.Step)
					if ev.ID != want {
						t.Errorf("step %d is %s, want %s", ev.Step, ev.ID, want)
					}
					if ev.ToolWait < 5*time.Millisecond {
						t.Errorf("%s: %v in tools, less than the tool latency 5ms", ev.ID, ev.ToolWait)
					}
				} else if ev.ID != want || ev.ToolWait != 0 {
					t.Errorf("first step %s (tool wait %v), want %s and none", ev.ID, ev.ToolWait, want)
				}
				if last := ev.Step == tc.wantSteps; ev.StepLimit != (last && tc.limit) {
					t.Errorf("%s: step limit %v", ev.ID, ev.StepLimit)
				}
			}
			for _, req := range b.sent {
				checkToolConversation(t, req, tc.per, 1+lv.Prompts.Fit.Words(4))
			}
		})
	}
}

// checkToolConversation checks req's messages: one user prompt, then per step an
// assistant message with its calls and each call's result, answered under its id, of
// words words.
func checkToolConversation(t *testing.T, req backends.Request, per, words int) {
	t.Helper()
	msgs := req.Messages()
	if msgs[0].Role != backends.RoleUser || msgs[0].Content == "" {
		t.Fatalf("%s: first message %+v, want the turn's prompt", req.ID, msgs[0])
	}
	step := strings.Contains(req.ID, "/step")
	if step != (req.Prompt == "") || step != (msgs[len(msgs)-1].Role == backends.RoleTool) {
		t.Fatalf("%s: prompt %q, last message %+v", req.ID, req.Prompt, msgs[len(msgs)-1])
	}
	for i := 1; i < len(msgs); i += 1 + per {
		a := msgs[i]
		if a.Role != backends.RoleAssistant || len(a.ToolCalls) != per {
			t.Fatalf("%s: message %d is %+v, want the assistant's %d calls", req.ID, i, a, per)
		}
		for j, call := range a.ToolCalls {
			r := msgs[i+1+j]
			if r.Role != backends.RoleTool || r.ToolCallID != call.CallID(i) || r.ToolName != "search" || len(strings.Fields(r.Content)) != words {
				t.Fatalf("%s: message %d is %+v, want the result of call %q (%d words, its marker's among them)", req.ID, i+1+j, r, call.CallID(i), words)
			}
		}
	}
}

// Results drawn from a dataset go to the calls of their tool (or of any tool), and the
// draws repeat: the same session, turn and step draw the same result in every run.
func TestAgentLoopDatasetResults(t *testing.T) {
	b := newToolBackend(1)
	lv := agentLevel(3, 1, 4)
	lv.RepeatRuns = 2
	lv.Session.Agent.Results = []ToolResult{{Tool: "other", Content: "never"}, {Tool: "search", Content: "found one"}, {Content: "found two"}}
	RunLevel(context.Background(), b, lv, Options{})
	got := map[string]string{}
	for _, req := range b.sent {
		msgs := req.Messages()
		if last := msgs[len(msgs)-1]; last.Role == backends.RoleTool {
			if last.Content != "found one" && last.Content != "found two" {
				t.Fatalf("%s: result %q, want one for the search tool", req.ID, last.Content)
			}
			id := req.ID[strings.Index(req.ID, "/"):]
			if prev, ok := got[id]; ok && prev != last.Content {
				t.Errorf("%s: result %q in one run, %q in another", id, prev, last.Content)
			}
			got[id] = last.Content
		}
	}
	if len(got) != 3 {
		t.Errorf("results for %d sessions' steps, want 3", len(got))
	}
}

// A failed step ends its session: no later step or turn is sent.
func TestAgentLoopFailedStep(t *testing.T) {
	b := newToolBackend(3)
	b.fail = func(string) bool { return false }
	lv := agentLevel(1, 2, 8)
	failing := &failSecondStep{toolBackend: b}
	var events []Event
	RunLevel(context.Background(), failing, lv, Options{OnRequest: collect(&events)})
	if len(events) != 2 || events[1].Step != 2 || events[1].OK() {
		t.Fatalf("%d requests: want step 1, then a failed step 2 and nothing after", len(events))
	}
}

type failSecondStep struct{ *toolBackend }

func (f *failSecondStep) Do(ctx context.Context, req backends.Request) backends.Sample {
	s := f.toolBackend.Do(ctx, req)
	if strings.HasSuffix(req.ID, "/step2") {
		s.Err = &backends.Error{Class: backends.ErrServer, Message: "boom"}
	}
	return s
}

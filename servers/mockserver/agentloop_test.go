package mockserver

import (
	"strings"
	"testing"
	"time"
)

// ToolCalls scripts an agent loop on every protocol that calls tools: a request whose
// conversation carries fewer tools' results calls a tool (even under tool_choice auto),
// one that carries as many answers in text, and "none" never calls. The results count as
// prompt words (a tool_result block's content too), so a prefix cache can serve them.
func TestScriptedToolCalls(t *testing.T) {
	const openaiTools = `"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`
	const messagesTools = `"tools":[{"name":"search","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}]`
	openaiStep := func(results int, choice string) string {
		msgs := `{"role":"user","content":"find it"}`
		for i := range results {
			msgs += `,{"role":"assistant","content":"","tool_calls":[{"id":"c` + string(rune('0'+i)) + `","type":"function","function":{"name":"search","arguments":"{}"}}]}` +
				`,{"role":"tool","tool_call_id":"c` + string(rune('0'+i)) + `","content":"three result words"}`
		}
		return `{"model":"m","messages":[` + msgs + `],"stream":true,"max_tokens":3,` + openaiTools + `,"tool_choice":"` + choice + `"}`
	}
	messagesStep := func(results int) string {
		msgs := `{"role":"user","content":"find it"}`
		for i := range results {
			id := `"u` + string(rune('0'+i)) + `"`
			msgs += `,{"role":"assistant","content":[{"type":"tool_use","id":` + id + `,"name":"search","input":{}}]}` +
				`,{"role":"user","content":[{"type":"tool_result","tool_use_id":` + id + `,"content":"three result words"}]}`
		}
		return `{"model":"m","messages":[` + msgs + `],"stream":true,"max_tokens":3,` + messagesTools + `}`
	}
	ollamaStep := func(results int) string {
		msgs := `{"role":"user","content":"find it"}`
		for range results {
			msgs += `,{"role":"assistant","content":"","tool_calls":[{"function":{"name":"search","arguments":{}}}]},{"role":"tool","tool_name":"search","content":"three result words"}`
		}
		return `{"model":"m","messages":[` + msgs + `],"options":{"num_predict":3},` + openaiTools + `}`
	}
	cfg := Config{TPOT: time.Millisecond, ToolCalls: 2}
	for _, tc := range []struct {
		name, path, body string
		call             bool
		prompt           int
	}{
		{"openai first", "/v1/chat/completions", openaiStep(0, "auto"), true, 2},
		{"openai second", "/v1/chat/completions", openaiStep(1, "auto"), true, 5},
		{"openai answer", "/v1/chat/completions", openaiStep(2, "required"), false, 8},
		{"openai none", "/v1/chat/completions", openaiStep(0, "none"), false, 2},
		{"messages first", "/v1/messages", messagesStep(0), true, 2},
		{"messages second", "/v1/messages", messagesStep(1), true, 5},
		{"messages answer", "/v1/messages", messagesStep(2), false, 8},
		{"ollama second", "/api/chat", ollamaStep(1), true, 5},
		{"ollama answer", "/api/chat", ollamaStep(2), false, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, s := serve(t, cfg, "POST", tc.path, tc.body, nil)
			truth := s.Truths()
			if len(truth) != 1 {
				t.Fatalf("%d truths: %s", len(truth), got)
			}
			if called := truth[0].ToolCall != ""; called != tc.call || (tc.call && truth[0].ToolCall != "search") {
				t.Errorf("called %q, want a call %v:\n%s", truth[0].ToolCall, tc.call, got)
			}
			if called := strings.Contains(got, `"search"`); called != tc.call {
				t.Errorf("the stream names the tool: %v, want %v:\n%s", called, tc.call, got)
			}
			if truth[0].PromptTokens != tc.prompt {
				t.Errorf("prompt %d words, want %d", truth[0].PromptTokens, tc.prompt)
			}
		})
	}
}

// A user's prompt after the results starts a new task: its count starts again.
func TestScriptedToolCallsPerTask(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"find it"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"search","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c","content":"r"},{"role":"assistant","content":"done"},{"role":"user","content":"and next?"}],` +
		`"stream":true,"max_tokens":3,"tools":[{"type":"function","function":{"name":"search"}}]}`
	_, s := serve(t, Config{ToolCalls: 1}, "POST", "/v1/chat/completions", body, nil)
	if tr := s.Truths(); len(tr) != 1 || tr[0].ToolCall != "search" {
		t.Errorf("truth %+v: want the new task's first step to call", tr)
	}
}

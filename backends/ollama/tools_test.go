package ollama

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

// TestToolCallLines: Ollama's /api/chat sends each tool call whole on a line
// (message.tool_calls, arguments an object): the call's first part and its end are that
// line's arrival, its arguments are kept as the JSON they are, and the tools go out in
// the request (Ollama has no tool_choice).
func TestToolCallLines(t *testing.T) {
	ms := time.Millisecond
	lines := []string{
		`{"model":"tiny","created_at":"2026-12-07T19:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_a1","function":{"index":0,"name":"get_weather","arguments":{"location":"Oslo","days":2}}}]},"done":false}`,
		`{"model":"tiny","created_at":"2026-12-07T19:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_b2","function":{"index":1,"name":"get_time","arguments":{}}}]},"done":false}`,
		`{"model":"tiny","created_at":"2026-12-07T19:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"prompt_eval_count":30,"eval_count":21,"eval_duration":1}`,
	}
	var segs []backendtest.Segment
	for i, l := range lines {
		segs = append(segs, backendtest.Segment{At: time.Duration(100+20*i) * ms, Data: []byte(l + "\n")})
	}
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 100 * ms, Segments: segs,
		Header: http.Header{"Content-Type": {"application/x-ndjson"}}}
	b, err := New(backends.Config{Name: "ollama.t", URL: "http://ollama.test"}, backends.WithClock(clock),
		backends.WithHTTPClient(&http.Client{Transport: replay}))
	if err != nil {
		t.Fatal(err)
	}
	weather := backends.Tool{Name: "get_weather", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"location": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}}}
	s := b.Do(context.Background(), backends.Request{Model: "tiny", Prompt: "p", Tools: []backends.Tool{weather, {Name: "get_time"}},
		ToolChoice: backends.ToolChoiceRequired})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	var got []string
	for _, c := range s.ToolCalls {
		got = append(got, c.ID+" "+c.Name+" "+c.Args+" "+c.First.String()+" "+c.Done.String())
	}
	want := []string{`call_a1 get_weather {"location":"Oslo","days":2} 100ms 100ms`, `call_b2 get_time {} 120ms 120ms`}
	if !reflect.DeepEqual(got, want) || !s.ToolCallValid() || s.ToolChunks != 2 || s.OutputTokens != 21 {
		t.Errorf("calls %q (want %q), valid %v, %d tool chunks, %d tokens", got, want, s.ToolCallValid(), s.ToolChunks, s.OutputTokens)
	}
	body := string(replay.Bodies()[0])
	if !strings.Contains(body, `"tools":[{"type":"function","function":{"name":"get_weather"`) || strings.Contains(body, "tool_choice") {
		t.Errorf("body %s: want the tools and no tool_choice", body)
	}
}

package openai

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

// TestToolCallStream: a stream of two tool calls in vLLM's shape (delta.tool_calls, the
// first entry with id and name, then argument fragments; the next call's start ends the
// first, finish_reason ends the last), each event at a known time. The calls' parts are
// generated output (TTFT, ITL), their timings and arguments are kept, the arguments are
// checked against the offered tools, and the usage's cached tokens are read.
func TestToolCallStream(t *testing.T) {
	ms := time.Millisecond
	parts := backendtest.Split(backendtest.ReadStream(t, "tool_calls.sse"), "\n\n")
	segs := backendtest.Timed(parts, 100*ms, 10*ms) // part i at 100 + 10i ms
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 20 * ms, Segments: segs}
	b := mustNew(t, backends.Config{URL: "http://vllm.test/v1"}, backends.WithClock(clock),
		backends.WithHTTPClient(&http.Client{Transport: replay}))
	weather := backends.Tool{Name: "get_weather", Parameters: map[string]any{"type": "object", "required": []any{"location"},
		"properties": map[string]any{"location": map[string]any{"type": "string"}}}}
	s := b.Do(context.Background(), backends.Request{Model: "m", Prompt: "p", Tools: []backends.Tool{weather, {Name: "get_time"}},
		ToolChoice: backends.ToolChoiceRequired})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	ttft, _ := s.TTFT()
	ttfo, _ := s.TTFO()
	type call struct {
		name, id, args string
		first, done    time.Duration
		valid          bool
	}
	var got []call
	for _, c := range s.ToolCalls {
		got = append(got, call{c.Name, c.ID, c.Args, c.First, c.Done, c.ArgsJSON && c.SchemaOK != nil && *c.SchemaOK})
	}
	want := []call{
		{"get_weather", "chatcmpl-tool-4b1", `{"location": "Oslo"}`, 110 * ms, 140 * ms, true},
		{"get_time", "chatcmpl-tool-77e", `{}`, 140 * ms, 150 * ms, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls\n %+v, want\n %+v", got, want)
	}
	check := []struct {
		name      string
		got, want any
	}{
		{"TTFT", ttft, 110 * ms},
		{"TTFO", ttfo, 110 * ms},
		{"arrivals", s.ChunkArrivals, []time.Duration{110 * ms, 120 * ms, 130 * ms, 140 * ms}},
		{"tool chunks", s.ToolChunks, 4},
		{"content chunks", s.Chunks, 0},
		{"tokens", s.OutputTokens, 18},
		{"cached", s.CachedTokens, 32},
		{"finish", s.FinishReason, "tool_calls"},
		{"valid", s.ToolCallValid(), true},
	}
	for _, c := range check {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	body := replay.Bodies()[0]
	for _, w := range []string{`"tool_choice":"required"`, `"tools":[{"type":"function","function":{"name":"get_weather"`} {
		if !strings.Contains(string(body), w) {
			t.Errorf("body %s lacks %s", body, w)
		}
	}
}

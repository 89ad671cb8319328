package anthropic

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func mustNew(t testing.TB, cfg backends.Config, opts ...backends.Option) *Backend {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "anthropic.test"
	}
	if cfg.Getenv == nil {
		cfg.Getenv = env(nil)
	}
	b, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// weather is the tool the recorded tool_use stream calls.
var weather = backends.Tool{Name: "get_weather", Description: "The weather at a place", Parameters: map[string]any{
	"type":       "object",
	"properties": map[string]any{"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}}},
	"required":   []any{"location"},
}}

// TestRecordedStreams replays streams in the Messages API's documented shapes, and one
// recorded from Ollama, byte for byte through a real HTTP server: thinking then text (with a ping between, and cached
// input tokens), and text then a tool call whose arguments come in input_json_delta
// fragments.
func TestRecordedStreams(t *testing.T) {
	tests := []struct {
		file                              string
		chunks, reasoning, toolChunks     int
		tokens, prompt, cached, textBytes int
		finish, text                      string
		calls                             []string // name: args
	}{
		{"thinking_text.sse", 2, 2, 0, 31, 2060, 2048, 17, "stop", "27 + 15 = **42**\n", nil},
		// Recorded from the pinned Ollama's /v1/messages (tiny model): 8 tokens in 2
		// deltas, and message_start's input_tokens (6, an estimate) replaced by
		// message_delta's count (21).
		{"ollama_messages.sse", 2, 0, 0, 8, 21, 0, 5, "length", " oren", nil},
		// The tool_use block's start (its name) and the three non-empty fragments; the
		// empty first fragment carries nothing.
		{"tool_use.sse", 1, 0, 4, 89, 472, 0, 30, "tool_calls", "Okay, let's check the weather.",
			[]string{`get_weather: {"location": "San Francisco, CA", "unit": "fahrenheit"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := httptest.NewServer(&backendtest.Stream{ContentType: "text/event-stream",
				Parts: backendtest.Split(backendtest.ReadStream(t, tt.file), "\n\n")})
			defer srv.Close()
			b := mustNew(t, backends.Config{URL: srv.URL + "/v1"})
			s := b.Do(context.Background(), backends.Request{ID: "r1", Model: "m", Prompt: "hi", MaxTokens: 100,
				KeepText: true, Tools: []backends.Tool{weather}})
			if s.Err != nil {
				t.Fatalf("error: %v", s.Err)
			}
			got := []any{s.Chunks, s.ReasoningChunks, s.ToolChunks, s.OutputTokens, s.PromptTokens, s.CachedTokens, s.TextBytes, s.TokenSource, s.FinishReason, s.Text}
			want := []any{tt.chunks, tt.reasoning, tt.toolChunks, tt.tokens, tt.prompt, tt.cached, tt.textBytes, backends.TokensUsage, tt.finish, tt.text}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("chunks, reasoning, tool chunks, tokens, prompt, cached, text bytes, source, finish, text =\n %q, want\n %q", got, want)
			}
			if n := len(s.ChunkArrivals); n != tt.chunks+tt.reasoning+tt.toolChunks {
				t.Errorf("%d arrivals, want %d", n, tt.chunks+tt.reasoning+tt.toolChunks)
			}
			var calls []string
			for _, c := range s.ToolCalls {
				calls = append(calls, c.Name+": "+c.Args)
				if !c.ArgsJSON || c.SchemaOK == nil || !*c.SchemaOK || c.ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || c.Done < c.First || c.First <= 0 {
					t.Errorf("call %+v: want JSON arguments matching the schema, its id, 0 < first <= done", c)
				}
			}
			if !reflect.DeepEqual(calls, tt.calls) {
				t.Errorf("calls %q, want %q", calls, tt.calls)
			}
			if s.ResponseID == "" || !strings.HasPrefix(s.ResponseID, "msg_") {
				t.Errorf("response id %q", s.ResponseID)
			}
		})
	}
}

// TestKnownTiming scripts each event's arrival with an injected clock: TTFT is the first
// thinking delta (the empty thinking block's start and the ping are not tokens), TTFO the
// first text delta, ITL the gaps between deltas of any kind, and E2E the last delta.
func TestKnownTiming(t *testing.T) {
	ms := time.Millisecond
	parts := backendtest.Split(backendtest.ReadStream(t, "thinking_text.sse"), "\n\n")
	// message_start, block start, ping, thinking ×2, signature, block stop, block start,
	// text ×2, block stop, message_delta, message_stop.
	at := []time.Duration{50, 60, 70, 100, 130, 140, 141, 142, 200, 215, 216, 230, 231}
	if len(parts) != len(at) {
		t.Fatalf("%d parts, %d times", len(parts), len(at))
	}
	segs := make([]backendtest.Segment, len(parts))
	for i := range parts {
		segs[i] = backendtest.Segment{At: at[i] * ms, Data: parts[i]}
	}
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 40 * ms, Segments: segs}
	b := mustNew(t, backends.Config{URL: "http://messages.test/v1"},
		backends.WithClock(clock), backends.WithHTTPClient(&http.Client{Transport: replay}))
	s := b.Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "p", MaxTokens: 64})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	ttft, _ := s.TTFT()
	ttfo, _ := s.TTFO()
	tpot, _ := s.TPOT()
	check := []struct {
		name      string
		got, want any
	}{
		{"TTFT", ttft, 100 * ms},
		{"TTFO", ttfo, 200 * ms},
		{"E2E", s.E2E(), 215 * ms},
		{"ITL", s.ITL(), []time.Duration{30 * ms, 70 * ms, 15 * ms}},
		{"TPOT", tpot, (215 - 100) * ms / 30}, // 31 tokens from usage
		{"tokens", s.OutputTokens, 31},
	}
	for _, c := range check {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestToolCallTiming: the call's first part is its tool_use block's start (the name),
// and it is complete at its content_block_stop; its fragments are generated output, so
// a stream that opens with a tool call has its TTFT and TTFO there.
func TestToolCallTiming(t *testing.T) {
	ms := time.Millisecond
	parts := backendtest.Split(backendtest.ReadStream(t, "tool_use.sse"), "\n\n")
	segs := backendtest.Timed(parts, 100*ms, 10*ms) // part i at 100 + 10i ms
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 20 * ms, Segments: segs}
	b := mustNew(t, backends.Config{URL: "http://messages.test/v1"},
		backends.WithClock(clock), backends.WithHTTPClient(&http.Client{Transport: replay}))
	s := b.Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "p", Tools: []backends.Tool{weather}, ToolChoice: "get_weather"})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	first, done, ok := s.ToolCallTimes()
	ttft, _ := s.TTFT()
	// Parts: 0 message_start, 1 block start, 2 ping, 3 text, 4 stop, 5 tool_use start,
	// 6 empty fragment, 7–9 fragments, 10 block stop, 11 message_delta, 12 message_stop.
	if !ok || first != 150*ms || done != 200*ms || ttft != 130*ms || !s.ToolCalled() || !s.ToolCallValid() {
		t.Errorf("tool call first %v done %v (%v), TTFT %v, called %v valid %v; want 150ms, 200ms, TTFT 130ms, called and valid",
			first, done, ok, ttft, s.ToolCalled(), s.ToolCallValid())
	}
	if want := []time.Duration{130 * ms, 150 * ms, 170 * ms, 180 * ms, 190 * ms}; !reflect.DeepEqual(s.ChunkArrivals, want) {
		t.Errorf("arrivals %v, want %v", s.ChunkArrivals, want)
	}
}

// TestToolCallChecks: arguments that are not JSON, or that miss the schema, or a call to
// a tool never offered, are calls all the same, and not valid ones.
func TestToolCallChecks(t *testing.T) {
	call := func(name, args string) string {
		return `event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3,"output_tokens":1}}}` + "\n\n" +
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"` + name + `","input":{}}}` + "\n\n" +
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"` + args + `"}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":0}` + "\n\n" +
			`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}` + "\n\n" +
			`data: {"type":"message_stop"}` + "\n\n"
	}
	tests := []struct {
		name, stream string
		json         bool
		schema       *bool
		why          string
	}{
		{"valid", call("get_weather", `{\"location\":\"Oslo\"}`), true, ptr(true), ""},
		{"not json", call("get_weather", `{\"location\":`), false, nil, "arguments are not JSON"},
		{"missing required", call("get_weather", `{\"unit\":\"celsius\"}`), true, ptr(false), `arguments lacks the required "location"`},
		{"bad enum", call("get_weather", `{\"location\":\"Oslo\",\"unit\":\"kelvin\"}`), true, ptr(false), `arguments.unit is "kelvin", not one of the schema's enum`},
		{"unknown tool", call("get_time", `{}`), true, nil, `the request offered no tool named "get_time"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{[]byte(tt.stream)}})
			defer srv.Close()
			s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(),
				backends.Request{Model: "m", Prompt: "p", Tools: []backends.Tool{weather}})
			if s.Err != nil || len(s.ToolCalls) != 1 {
				t.Fatalf("error %v, %d calls", s.Err, len(s.ToolCalls))
			}
			c := s.ToolCalls[0]
			if c.ArgsJSON != tt.json || !reflect.DeepEqual(c.SchemaOK, tt.schema) || !strings.HasPrefix(c.Why, tt.why) || s.ToolCallValid() != (tt.why == "") {
				t.Errorf("json %v schema %v why %q valid %v; want %v %v %q", c.ArgsJSON, show(c.SchemaOK), c.Why, s.ToolCallValid(), tt.json, show(tt.schema), tt.why)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func show(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// TestErrors: Anthropic's error shapes, as HTTP answers and as a mid-stream error event,
// are classified as every other protocol's are; a stream cut before message_stop is a
// stream_cut of this request.
func TestErrors(t *testing.T) {
	answer := func(status int, typ, msg string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "7")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(`{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`))
		}
	}
	tests := []struct {
		name    string
		h       http.Handler
		class   backends.ErrorClass
		status  int
		message string
	}{
		{"overloaded 529", answer(529, "overloaded_error", "Overloaded"), backends.ErrServer, 529, "Server said: Overloaded."},
		{"rate limited 429", answer(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
			backends.ErrRateLimited, 429, "the server asks to retry after 7"},
		{"invalid request 400", answer(400, "invalid_request_error", "max_tokens: Field required"), backends.ErrHTTP4xx, 400, "Server said: max_tokens: Field required."},
		{"overloaded mid-stream", &backendtest.Stream{ContentType: "text/event-stream",
			Parts: backendtest.Split(backendtest.ReadStream(t, "error_overloaded.sse"), "\n\n")},
			backends.ErrServer, 0, "the server reported an error mid-stream (overloaded_error): Overloaded"},
		{"rate limited mid-stream", &backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{
			[]byte(`data: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}` + "\n\n")}},
			backends.ErrRateLimited, 0, "(rate_limit_error): slow down"},
		{"cut after a delta", &backendtest.Stream{ContentType: "text/event-stream", Cut: true,
			Parts: backendtest.Split(backendtest.ReadStream(t, "thinking_text.sse"), "\n\n")[:5]},
			backends.ErrStreamCut, 0, "the stream was cut mid-way after 2 content chunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.h)
			defer srv.Close()
			s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(context.Background(), backends.Request{Model: "m", Prompt: "p"})
			if s.Err == nil || s.Err.Class != tt.class || s.Err.Status != tt.status || !strings.Contains(s.Err.Message, tt.message) {
				t.Fatalf("error %+v, want class %s status %d containing %q", s.Err, tt.class, tt.status, tt.message)
			}
		})
	}
}

// TestKey: the key goes in x-api-key by default and as a bearer token where the plan
// says so, read from the environment only; a server that echoes it does not get it into
// the error.
func TestKey(t *testing.T) {
	const key = "sk-ant-secret-123"
	for _, header := range []string{"", backends.KeyXAPIKey, backends.KeyBearer} {
		t.Run("header="+header, func(t *testing.T) {
			var got http.Header
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Header.Clone()
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`))
			}))
			defer srv.Close()
			b := mustNew(t, backends.Config{URL: srv.URL + "/v1", APIKeyEnv: "ANTHROPIC_API_KEY", KeyHeader: header,
				Getenv: env(map[string]string{"ANTHROPIC_API_KEY": key})})
			s := b.Do(context.Background(), backends.Request{Model: "m", Prompt: "p"})
			bearer := header == backends.KeyBearer
			if (got.Get("X-Api-Key") == key) == bearer || (got.Get("Authorization") == "Bearer "+key) != bearer {
				t.Errorf("x-api-key %q, authorization %q", got.Get("X-Api-Key"), got.Get("Authorization"))
			}
			if got.Get("Anthropic-Version") != Version {
				t.Errorf("anthropic-version %q", got.Get("Anthropic-Version"))
			}
			if s.Err == nil || s.Err.Class != backends.ErrUnauthorized || strings.Contains(s.Err.Message, key) {
				t.Fatalf("error %+v: want 401 without the key", s.Err)
			}
			want := "`x-api-key: <key>`"
			if bearer {
				want = "`Authorization: Bearer <key>`"
			}
			if !strings.Contains(s.Err.Message, want) {
				t.Errorf("message %q does not say the key goes in %s", s.Err.Message, want)
			}
		})
	}
	// Unset: no request, the variable named.
	b := mustNew(t, backends.Config{URL: "http://127.0.0.1:9/v1", APIKeyEnv: "ANTHROPIC_API_KEY"})
	if s := b.Do(context.Background(), backends.Request{Model: "m"}); s.Err == nil || s.Err.Class != backends.ErrMissingKey {
		t.Errorf("unset key: %+v", s.Err)
	}
}

// TestRequestBodies holds the wire format to golden files (go test -update rewrites).
func TestRequestBodies(t *testing.T) {
	temp := 0.0
	yes, no := true, false
	tests := []struct {
		name string
		cfg  backends.Config
		req  backends.Request
	}{
		{"plain", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 16, Temperature: &temp}},
		// max_tokens is required by the API: the default when the workload sets none.
		{"no_max_tokens", backends.Config{}, backends.Request{Model: "m", Prompt: "hi"}},
		{"history_think", backends.Config{ExtraFields: map[string]any{"top_k": 5}}, backends.Request{Model: "m", Prompt: "and then?", MaxTokens: 2048, Think: &yes,
			History: []backends.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello \"you\""}}}},
		// An agent loop's later step: the calls and their results in the protocol's shape.
		{"agent_step", backends.Config{}, backendtest.AgentStep("m")},
		// A replayed agent's system message is the API's top-level system.
		{"system", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 8,
			History: []backends.Message{{Role: "system", Content: "be brief"}}}},
		{"no_think", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 8, Think: &no}},
		{"tools_required", backends.Config{}, backends.Request{Model: "m", Prompt: "weather?", MaxTokens: 64,
			Tools: []backends.Tool{weather, {Name: "now"}}, ToolChoice: backends.ToolChoiceRequired}},
		{"tools_named", backends.Config{}, backends.Request{Model: "m", Prompt: "weather?", MaxTokens: 64,
			Tools: []backends.Tool{weather}, ToolChoice: "get_weather"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.URL = "http://x.test/v1"
			got, err := mustNew(t, tt.cfg).Body(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "request_"+tt.name+".golden.json")
			if *update {
				os.WriteFile(golden, append(got, '\n'), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("body\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestNew refuses what the adapter sets itself, and an api it does not speak.
func TestNew(t *testing.T) {
	for _, cfg := range []backends.Config{
		{URL: "http://x.test/v1", ExtraFields: map[string]any{"max_tokens": 3}},
		{URL: "http://x.test/v1", API: "chat"},
		{URL: "x.test"},
	} {
		cfg.Name = "anthropic.x"
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

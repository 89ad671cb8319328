package ollama

import (
	"bytes"
	"context"
	"flag"
	"fmt"
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

func mustNew(t testing.TB, cfg backends.Config, opts ...backends.Option) *Backend {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "ollama.test"
	}
	b, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecordedStreams(t *testing.T) {
	tests := []struct {
		file, api                         string
		chunks, reasoning, tokens, prompt int
		text                              int
		finish                            string
		server                            backends.ServerTimings
	}{
		{"chat.ndjson", "chat", 4, 0, 5, 7, 12, "length", backends.ServerTimings{LoadDuration: 12345678, PromptEvalCount: 7,
			PromptEvalDuration: 2345678, EvalCount: 5, EvalDuration: 61234567, TotalDuration: 81234567}},
		{"generate.ndjson", "generate", 4, 1, 6, 4, 16, "stop", backends.ServerTimings{LoadDuration: 1000000, PromptEvalCount: 4,
			PromptEvalDuration: 3000000, EvalCount: 6, EvalDuration: 40000000, TotalDuration: 50000000}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := httptest.NewServer(&backendtest.Stream{ContentType: "application/x-ndjson",
				Parts: backendtest.Split(backendtest.ReadStream(t, tt.file), "\n")})
			defer srv.Close()
			s := mustNew(t, backends.Config{URL: srv.URL, API: tt.api}).Do(context.Background(), backends.Request{Model: "tiny", Prompt: "p"})
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			got := []any{s.Chunks, s.ReasoningChunks, s.OutputTokens, s.PromptTokens, s.TextBytes, s.FinishReason, s.TokenSource}
			want := []any{tt.chunks, tt.reasoning, tt.tokens, tt.prompt, tt.text, tt.finish, backends.TokensServer}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("chunks, reasoning, tokens, prompt, text, finish, source = %v, want %v", got, want)
			}
			if s.Server == nil || *s.Server != tt.server {
				t.Errorf("server timings %+v, want %+v", s.Server, tt.server)
			}
			if ttft, ok := s.TTFT(); !ok || ttft <= 0 || ttft > s.E2E() {
				t.Errorf("TTFT %v E2E %v", ttft, s.E2E())
			}
		})
	}
}

func TestKnownTiming(t *testing.T) {
	ms := time.Millisecond
	parts := backendtest.Split(backendtest.ReadStream(t, "chat.ndjson"), "\n")
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 3 * ms, Header: http.Header{"Content-Type": {"application/x-ndjson"}},
		Segments: backendtest.Timed(parts, 120*ms, 15*ms)}
	s := mustNew(t, backends.Config{URL: "http://ollama.test"}, backends.WithClock(clock),
		backends.WithHTTPClient(&http.Client{Transport: replay})).Do(context.Background(), backends.Request{Model: "tiny"})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	ttft, _ := s.TTFT()
	tpot, _ := s.TPOT()
	// Content at 120, 135, 150, 165ms; the done line (165+15) carries no content.
	// TPOT = (165 − 120) / (eval_count 5 − 1).
	if ttft != 120*ms || s.E2E() != 165*ms || tpot != 45*ms/4 || !reflect.DeepEqual(s.ITL(), []time.Duration{15 * ms, 15 * ms, 15 * ms}) {
		t.Errorf("TTFT %v E2E %v TPOT %v ITL %v", ttft, s.E2E(), tpot, s.ITL())
	}
}

func TestRequestBodies(t *testing.T) {
	temp, seed := 0.5, int64(7)
	tests := []struct {
		name string
		cfg  backends.Config
		req  backends.Request
	}{
		{"chat", backends.Config{KeepAlive: "5m", ExtraFields: map[string]any{"options": map[string]any{"num_ctx": 4096}}},
			backends.Request{Model: "tiny", Prompt: "hi", MaxTokens: 32, Temperature: &temp, Seed: &seed}},
		{"generate", backends.Config{API: "generate"}, backends.Request{Model: "tiny", Prompt: "hi"}},
		// A session's later turn: the history goes ahead of the prompt, in order.
		// An agent loop's later step: the calls and their results in the protocol's shape.
		{"agent_step", backends.Config{}, backendtest.AgentStep("tiny")},
		{"chat_history", backends.Config{}, backends.Request{Model: "tiny", Prompt: "and then?",
			History: []backends.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}}},
		// think: the switch, or else the effort as a level (gpt-oss's).
		{"chat_think", backends.Config{}, backends.Request{Model: "tiny", Prompt: "hi", Think: new(true)}},
		{"chat_think_effort", backends.Config{}, backends.Request{Model: "tiny", Prompt: "hi", ReasoningEffort: "high"}},
		// A quality phase's request on a chat backend: the prompt as it is, through
		// /api/generate's raw, with the top log-probabilities.
		{"raw_logprobs", backends.Config{}, backends.Request{Model: "tiny", Prompt: "the cat", MaxTokens: 16,
			Greedy: true, Seed: &seed, Raw: true, TopLogProbs: 5}},
		// /api/embed: the inputs and keep_alive, no stream or options.
		{"embed", backends.Config{API: backends.EmbeddingsAPI, KeepAlive: "1m"}, backends.Request{Model: "tiny", Inputs: []string{"a", "b"}, MaxTokens: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.URL = "http://x.test"
			got, err := mustNew(t, tt.cfg).Body(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "request_"+tt.name+".golden.json")
			if *update {
				os.WriteFile(golden, append(got, '\n'), 0o644)
			}
			want, _ := os.ReadFile(golden)
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("body\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	parts := backendtest.Split(backendtest.ReadStream(t, "chat.ndjson"), "\n")
	tags := `{"models":[{"name":"qwen2.5:7b","model":"qwen2.5:7b","size":1},{"name":"tiny:latest","model":"tiny:latest","size":1}]}`
	tests := []struct {
		name    string
		handler http.Handler
		class   backends.ErrorClass
		chunks  int
		says    []string
	}{
		{"404 unknown model", func() http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("/api/tags", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, tags) })
			mux.HandleFunc("/api/chat", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(404)
				fmt.Fprint(w, `{"error":"model \"llama9\" not found, try pulling it first"}`)
			})
			return mux
		}(), backends.ErrNotFound, 0, []string{"try pulling it first", "qwen2.5:7b, tiny:latest"}},
		// Ollama closes the stream without a done line when the runner dies.
		{"no done line", &backendtest.Stream{ContentType: "application/x-ndjson", Parts: parts[:2]}, backends.ErrStreamCut, 2,
			[]string{"cut mid-way after 2"}},
		{"cut", &backendtest.Stream{ContentType: "application/x-ndjson", Parts: parts[:3], Cut: true}, backends.ErrStreamCut, 3, nil},
		{"malformed", &backendtest.Stream{ContentType: "application/x-ndjson", Parts: [][]byte{parts[0], []byte("{\"message\":{\"content\":\"x\"}\n")}},
			backends.ErrMalformed, 1, []string{"malformed line"}},
		{"error line", &backendtest.Stream{ContentType: "application/x-ndjson", Parts: [][]byte{parts[0], []byte(`{"error":"llama runner process has terminated"}` + "\n")}},
			backends.ErrServer, 1, []string{"runner process has terminated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			s := mustNew(t, backends.Config{URL: srv.URL}).Do(context.Background(), backends.Request{Model: "llama9"})
			if s.Err == nil || s.Err.Class != tt.class {
				t.Fatalf("err %v, want class %s", s.Err, tt.class)
			}
			for _, w := range tt.says {
				if !strings.Contains(s.Err.Message, w) {
					t.Errorf("message %q does not say %q", s.Err.Message, w)
				}
			}
			if s.Chunks != tt.chunks {
				t.Errorf("%d chunks, want %d", s.Chunks, tt.chunks)
			}
		})
	}
}

func TestProbe(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"version":"0.6.5"}`) })
	mux.HandleFunc("/api/tags", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"models":[{"name":"tiny:latest","model":"tiny:latest"}]}`)
	})
	mux.Handle("/api/chat", &backendtest.Stream{ContentType: "application/x-ndjson", Parts: backendtest.Split(backendtest.ReadStream(t, "chat.ndjson"), "\n")})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := mustNew(t, backends.Config{URL: srv.URL}).Probe(context.Background(), []string{"tiny"})
	if !r.OK() || r.Version != "0.6.5" || !r.ModelsPresent["tiny"] || r.UsageReported == nil || !*r.UsageReported {
		t.Errorf("probe %+v", r)
	}
}

// TestKeepText: a request that keeps its text gets the answer's content (not thinking).
func TestKeepText(t *testing.T) {
	srv := httptest.NewServer(&backendtest.Stream{ContentType: "application/x-ndjson",
		Parts: backendtest.Split(backendtest.ReadStream(t, "chat.ndjson"), "\n")})
	defer srv.Close()
	s := mustNew(t, backends.Config{URL: srv.URL}).Do(context.Background(), backends.Request{Model: "tiny", Prompt: "p", KeepText: true})
	if s.Err != nil || s.Text != "Hello there!" {
		t.Errorf("text %q (error %v), want %q", s.Text, s.Err, "Hello there!")
	}
}

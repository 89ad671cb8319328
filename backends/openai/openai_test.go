package openai

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
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
		cfg.Name = "openai.test"
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

// TestRecordedStreams replays recorded streams byte for byte through a real HTTP server
// and checks what the core makes of them.
func TestRecordedStreams(t *testing.T) {
	tests := []struct {
		file, api                    string
		chunks, reasoning            int
		tokens, prompt, text, rbytes int
		source                       backends.TokenSource
		finish                       string
	}{
		{"vllm_chat.sse", "chat", 4, 0, 6, 12, 13, 0, backends.TokensUsage, "length"},
		{"vllm_completions.sse", "completions", 5, 0, 5, 5, 17, 0, backends.TokensUsage, "stop"},
		// Ollama's /v1: 5 tokens in 2 chunks, so counting chunks would be wrong.
		{"ollama_v1_chat.sse", "chat", 2, 0, 5, 3, 5, 0, backends.TokensUsage, "length"},
		// Comments, CRLF, multi-line data, empty deltas, reasoning, no usage, no [DONE].
		{"quirks_no_usage_no_done.sse", "chat", 2, 1, 3, 0, 9, 7, backends.TokensChunks, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := httptest.NewServer(&backendtest.Stream{ContentType: "text/event-stream",
				Parts: backendtest.Split(backendtest.ReadStream(t, tt.file), "\n\n")})
			defer srv.Close()
			b := mustNew(t, backends.Config{URL: srv.URL + "/v1", API: tt.api})
			s := b.Do(context.Background(), backends.Request{ID: "r1", Model: "m", Prompt: "hi", MaxTokens: 6})
			if s.Err != nil {
				t.Fatalf("error: %v", s.Err)
			}
			got := []any{s.Chunks, s.ReasoningChunks, s.OutputTokens, s.PromptTokens, s.TextBytes, s.ReasoningBytes, s.TokenSource, s.FinishReason}
			want := []any{tt.chunks, tt.reasoning, tt.tokens, tt.prompt, tt.text, tt.rbytes, tt.source, tt.finish}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("chunks, reasoning, tokens, prompt, text, reasoning bytes, source, finish =\n %v, want\n %v", got, want)
			}
			if len(s.ChunkArrivals) != tt.chunks+tt.reasoning {
				t.Errorf("%d arrivals, want %d", len(s.ChunkArrivals), tt.chunks+tt.reasoning)
			}
			ttft, ok := s.TTFT()
			if !ok || ttft <= 0 || ttft > s.E2E() || s.Headers <= 0 || s.Headers > ttft {
				t.Errorf("headers %v, TTFT %v (%v), E2E %v: want 0 < headers <= TTFT <= E2E", s.Headers, ttft, ok, s.E2E())
			}
		})
	}
}

// TestKnownTiming scripts arrival times with an injected clock, so the metrics are
// asserted exactly. The role-only first chunk arrives at 100ms: it must not be TTFT.
func TestKnownTiming(t *testing.T) {
	ms := time.Millisecond
	parts := backendtest.Split(backendtest.ReadStream(t, "vllm_chat.sse"), "\n\n")
	at := []time.Duration{100 * ms, 250 * ms, 262 * ms, 290 * ms, 310 * ms, 311 * ms, 312 * ms, 313 * ms}
	if len(parts) != len(at) {
		t.Fatalf("%d parts", len(parts))
	}
	segs := make([]backendtest.Segment, len(parts))
	for i := range parts {
		segs[i] = backendtest.Segment{At: at[i], Data: parts[i]}
	}
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 40 * ms, Segments: segs}
	b := mustNew(t, backends.Config{URL: "http://vllm.test/v1"},
		backends.WithClock(clock), backends.WithHTTPClient(&http.Client{Transport: replay}))
	s := b.Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "p", MaxTokens: 6})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if !s.Start.Equal(backendtest.Epoch) {
		t.Errorf("start %v", s.Start)
	}
	ttft, _ := s.TTFT()
	tpot, _ := s.TPOT()
	rate, _ := s.DecodeRate()
	check := []struct {
		name      string
		got, want any
	}{
		{"first byte", s.FirstByte, 40 * ms},
		{"headers", s.Headers, 40 * ms},
		{"TTFT", ttft, 250 * ms},
		{"E2E", s.E2E(), 310 * ms},
		{"arrivals", s.ChunkArrivals, []time.Duration{250 * ms, 262 * ms, 290 * ms, 310 * ms}},
		{"ITL", s.ITL(), []time.Duration{12 * ms, 28 * ms, 20 * ms}},
		// vLLM's TPOT: (310 − 250) / (6 − 1) tokens from usage, not chunks.
		{"TPOT", tpot, 12 * ms},
		{"decode rate", rate, 1000.0 / 12},
		{"chunks", s.Chunks, 4},
		{"tokens", s.OutputTokens, 6},
	}
	for _, c := range check {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestNoContentEndsAtStreamEnd: with no generated chunk, E2E is the end of the stream.
func TestNoContentEndsAtStreamEnd(t *testing.T) {
	ms := time.Millisecond
	clock := backendtest.NewClock()
	replay := &backendtest.Replay{Clock: clock, HeadersAt: 5 * ms, Segments: []backendtest.Segment{
		{At: 10 * ms, Data: []byte(`data: {"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")},
		{At: 30 * ms, Data: []byte(`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n")},
		{At: 35 * ms, Data: []byte(`data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":0}}` + "\n\n")},
		{At: 37 * ms, Data: []byte("data: [DONE]\n\n")},
	}}
	b := mustNew(t, backends.Config{URL: "http://x.test/v1"}, backends.WithClock(clock),
		backends.WithHTTPClient(&http.Client{Transport: replay}))
	s := b.Do(context.Background(), backends.Request{Model: "m"})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if _, ok := s.TTFT(); ok || s.End != 37*ms || s.OutputTokens != 0 || s.TokenSource != backends.TokensUsage {
		t.Errorf("TTFT ok %v, end %v, tokens %d %s; want no TTFT, end 37ms, 0 usage", ok, s.End, s.OutputTokens, s.TokenSource)
	}
}

// TestRequestBodies holds the wire format to golden files (go test -update rewrites).
func TestRequestBodies(t *testing.T) {
	temp, seed := 0.0, int64(42)
	tests := []struct {
		name string
		cfg  backends.Config
		req  backends.Request
	}{
		{"chat_plain", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 16}},
		// No max tokens: the server's own limit, and no max_tokens field (not a 0).
		{"chat_no_max_tokens", backends.Config{}, backends.Request{Model: "m", Prompt: "hi"}},
		{"responses_no_max_tokens", backends.Config{API: "responses"}, backends.Request{Model: "m", Prompt: "hi"}},
		{"chat_engine", backends.Config{EngineExtensions: true, ExtraFields: map[string]any{"top_k": 5}},
			backends.Request{Model: "m", Prompt: "hi", MaxTokens: 16, ForceMaxTokens: true, Temperature: &temp, Seed: &seed}},
		// Without engine extensions, ForceMaxTokens sends nothing the server might reject.
		{"chat_force_no_engine", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 16, ForceMaxTokens: true}},
		{"completions", backends.Config{API: "completions"}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 8}},
		// A session's later turn: the history goes ahead of the prompt, in order.
		// An agent loop's later step: the calls and their results in the protocol's shape.
		{"agent_step", backends.Config{}, backendtest.AgentStep("m")},
		{"chat_history", backends.Config{}, backends.Request{Model: "m", Prompt: "and then?", MaxTokens: 8,
			History: []backends.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello \"you\""}}}},
		// A workload's reasoning_effort goes as it is; Ollama's think has no OpenAI field.
		{"chat_reasoning", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 8, ReasoningEffort: "low", Think: new(bool)}},
		// Quality requests: a chat backend's raw prompt goes to completions with its
		// top log-probabilities; chat asks for them its own way; token ids and vLLM's
		// prompt_logprobs only with engine extensions.
		{"raw_logprobs", backends.Config{}, backends.Request{Model: "m", Prompt: "the cat", MaxTokens: 16, Temperature: &temp,
			Raw: true, TopLogProbs: 5, PromptLogProbs: 5, TokenIDs: true}},
		{"chat_logprobs", backends.Config{}, backends.Request{Model: "m", Prompt: "hi", MaxTokens: 4, TopLogProbs: 3}},
		{"teacher_forced", backends.Config{EngineExtensions: true}, backends.Request{Model: "m", PromptIDs: []int{1, 450, 6635},
			MaxTokens: 1, NoStream: true, Greedy: true, TopLogProbs: 5, PromptLogProbs: 5, TokenIDs: true}},
		// The Responses API: input messages, max_output_tokens, reasoning.effort, store off.
		{"responses", backends.Config{API: "responses", EngineExtensions: true}, backends.Request{Model: "m", Prompt: "and then?", MaxTokens: 8,
			ForceMaxTokens: true, Temperature: &temp, ReasoningEffort: "high", History: []backends.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}}},
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

func TestConfigRejected(t *testing.T) {
	for _, cfg := range []backends.Config{
		{URL: "127.0.0.1:8000"},
		{URL: "http://x/v1", API: "assistants"}, // an api the adapter does not have ("responses" it now has)
		{URL: "http://x/v1", ExtraFields: map[string]any{"stream": false}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := NewStrict(backends.Config{URL: "http://x/v1", ExtraFields: map[string]any{"top_k": 1}}); err == nil {
		t.Error("strict backend accepted a non-standard field")
	}
	if _, err := NewStrict(backends.Config{URL: "http://x/v1", ExtraFields: map[string]any{"top_p": 0.9}}); err != nil {
		t.Errorf("strict backend refused a standard field: %v", err)
	}
	if _, err := NewStrict(backends.Config{URL: "http://x/v1", EngineExtensions: true}); err == nil {
		t.Error("strict backend accepted engine extensions")
	}
}

const secret = "sk-live-THIS-MUST-NOT-LEAK-1234"

// echoKey answers with status and a body that repeats the Authorization header, as some
// proxies do: the key must still never reach a message.
func echoKey(status int, header map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"bad request with %s","type":"x"}}`, r.Header.Get("Authorization"))
	}
}

func TestFaults(t *testing.T) {
	chat := backendtest.ReadStream(t, "vllm_chat.sse")
	parts := backendtest.Split(chat, "\n\n")
	long := strings.Repeat("Traceback line; ", 200)
	var modelLists atomic.Int32
	models := func(w http.ResponseWriter, r *http.Request) {
		modelLists.Add(1)
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen-7b","object":"model"},{"id":"llama-8b","object":"model"}]}`)
	}
	refusedURL := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr + "/v1"
	}()
	blockingDial := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	ms := time.Millisecond

	tests := []struct {
		name     string
		handler  http.Handler // nil: use url
		url      string
		client   *http.Client
		keyEnv   string
		env      map[string]string
		timeouts backends.Timeouts
		class    backends.ErrorClass
		phase    string
		says     []string
		retry    string
		chunks   int
	}{
		{name: "refused", url: refusedURL, class: backends.ErrRefused, says: []string{"is the server running at " + refusedURL + "?"}},
		{name: "missing key", handler: echoKey(200, nil), keyEnv: "VLLM_KEY", class: backends.ErrMissingKey,
			says: []string{"VLLM_KEY", "not set"}},
		{name: "401", handler: echoKey(401, nil), keyEnv: "VLLM_KEY", env: map[string]string{"VLLM_KEY": secret},
			class: backends.ErrUnauthorized, says: []string{"`Authorization: Bearer <key>`", "$VLLM_KEY", "[redacted]"}},
		{name: "401 no key configured", handler: echoKey(401, nil), class: backends.ErrUnauthorized,
			says: []string{"no key was sent", "api_key_env", "`Authorization: Bearer <key>`"}},
		{name: "403", handler: echoKey(403, nil), keyEnv: "VLLM_KEY", env: map[string]string{"VLLM_KEY": secret},
			class: backends.ErrForbidden, says: []string{"`Authorization: Bearer <key>`", "$VLLM_KEY"}},
		{name: "404 unknown model", handler: func() http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("/v1/models", models)
			mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(404)
				fmt.Fprint(w, `{"object":"error","message":"The model `+"`m`"+` does not exist.","type":"NotFoundError","param":null,"code":404}`)
			})
			return mux
		}(), class: backends.ErrNotFound, says: []string{"does not exist", `"m" is not served here`, "qwen-7b, llama-8b"}},
		{name: "429", handler: echoKey(429, map[string]string{"Retry-After": "7"}), keyEnv: "K", env: map[string]string{"K": secret},
			class: backends.ErrRateLimited, retry: "7", says: []string{"retry after 7"}},
		{name: "5xx truncated", handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			fmt.Fprint(w, long)
		}), class: backends.ErrServer, says: []string{"503 Service Unavailable", "Traceback line", "(truncated)"}},
		{name: "stream cut", handler: &backendtest.Stream{ContentType: "text/event-stream", Parts: parts[:3], Cut: true},
			class: backends.ErrStreamCut, chunks: 2, says: []string{"cut mid-way after 2 content chunks"}},
		{name: "malformed", handler: &backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{parts[0], parts[1],
			[]byte(`data: {"choices":[{"delta":{"content":"x"}]` + "\n\n")}},
			class: backends.ErrMalformed, chunks: 1, says: []string{"malformed chunk", `"{\"choices\":[{\"delta\":{\"content\":\"x\"}]"`}},
		{name: "error event", handler: &backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{parts[0],
			[]byte(`data: {"error":{"object":"error","message":"CUDA out of memory","type":"InternalServerError","code":500}}` + "\n\n")}},
			class: backends.ErrServer, says: []string{"mid-stream: CUDA out of memory"}},
		{name: "connect timeout", url: "http://10.255.255.1:9/v1", client: blockingDial, timeouts: backends.Timeouts{Connect: 30 * ms},
			class: backends.ErrTimeout, phase: "connect", says: []string{"timeouts.connect"}},
		{name: "first token timeout", handler: &backendtest.Stream{ContentType: "text/event-stream", Parts: parts,
			Hang: make(chan struct{}), HangAfter: 1}, timeouts: backends.Timeouts{FirstToken: 50 * ms},
			class: backends.ErrTimeout, phase: "first_token", says: []string{"timeouts.first_token"}},
		{name: "idle timeout", handler: &backendtest.Stream{ContentType: "text/event-stream", Parts: parts,
			Hang: make(chan struct{}), HangAfter: 3}, timeouts: backends.Timeouts{FirstToken: time.Minute, Idle: 50 * ms},
			class: backends.ErrTimeout, phase: "idle", chunks: 2, says: []string{"stalled", "timeouts.idle"}},
		{name: "total timeout", handler: &backendtest.Stream{ContentType: "text/event-stream", Parts: parts,
			Hang: make(chan struct{}), HangAfter: 2}, timeouts: backends.Timeouts{Total: 80 * ms},
			class: backends.ErrTimeout, phase: "total", chunks: 1, says: []string{"timeouts.total"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				defer srv.Close()
				url = srv.URL + "/v1"
			}
			if st, ok := tt.handler.(*backendtest.Stream); ok && st.Hang != nil {
				defer close(st.Hang)
			}
			var opts []backends.Option
			if tt.client != nil {
				opts = append(opts, backends.WithHTTPClient(tt.client))
			}
			b := mustNew(t, backends.Config{URL: url, APIKeyEnv: tt.keyEnv, Getenv: env(tt.env), Timeouts: tt.timeouts}, opts...)
			s := b.Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "p"})
			if s.Err == nil {
				t.Fatalf("no error; sample %+v", s)
			}
			if s.Err.Class != tt.class || s.Err.Phase != tt.phase || s.Err.RetryAfter != tt.retry {
				t.Errorf("class %q phase %q retry %q, want %q %q %q (%s)", s.Err.Class, s.Err.Phase, s.Err.RetryAfter,
					tt.class, tt.phase, tt.retry, s.Err.Message)
			}
			for _, want := range tt.says {
				if !strings.Contains(s.Err.Message, want) {
					t.Errorf("message %q does not say %q", s.Err.Message, want)
				}
			}
			if strings.Contains(s.Err.Message, secret) || strings.Contains(s.Err.Error(), secret) {
				t.Errorf("message leaks the key: %q", s.Err.Message)
			}
			if s.Chunks != tt.chunks {
				t.Errorf("%d content chunks recorded, want %d", s.Chunks, tt.chunks)
			}
		})
	}
	if n := modelLists.Load(); n != 1 {
		t.Errorf("model list fetched %d times", n)
	}
}

// TestModelListCached: a second unknown-model failure uses the cached list.
func TestModelListCached(t *testing.T) {
	var lists atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		lists.Add(1)
		fmt.Fprint(w, `{"data":[{"id":"a"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL + "/v1"})
	for i := 0; i < 3; i++ {
		if s := b.Do(context.Background(), backends.Request{Model: "zz"}); s.Err == nil || !strings.Contains(s.Err.Message, "has: a") {
			t.Fatalf("sample %+v", s.Err)
		}
	}
	if lists.Load() != 1 {
		t.Errorf("listed %d times, want once", lists.Load())
	}
}

func TestCanceled(t *testing.T) {
	st := &backendtest.Stream{ContentType: "text/event-stream", Parts: [][]byte{[]byte("data: {\"choices\":[]}\n\n")}, Hang: make(chan struct{})}
	defer close(st.Hang)
	srv := httptest.NewServer(st)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	s := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Do(ctx, backends.Request{Model: "m"})
	if s.Err == nil || s.Err.Class != backends.ErrCanceled {
		t.Fatalf("err %v, want canceled", s.Err)
	}
}

func TestProbe(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"qwen-7b"}]}`)
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"version":"0.8.5"}`) })
	mux.Handle("/v1/chat/completions", &backendtest.Stream{ContentType: "text/event-stream",
		Parts: backendtest.Split(backendtest.ReadStream(t, "vllm_chat.sse"), "\n\n")})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Probe(context.Background(), []string{"qwen-7b", "gone"})
	if !r.Reachable || r.Version != "0.8.5" || !r.ModelsPresent["qwen-7b"] || r.ModelsPresent["gone"] ||
		r.UsageReported == nil || !*r.UsageReported || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], `"gone"`) || r.OK() {
		t.Errorf("probe %+v", r)
	}
	down := mustNew(t, backends.Config{URL: "http://127.0.0.1:1/v1"}).Probe(context.Background(), nil)
	if down.Reachable || len(down.Problems) == 0 || !strings.Contains(down.Problems[0], "is the server running") ||
		down.ErrorClass != backends.ErrRefused {
		t.Errorf("probe of a closed port %+v", down)
	}
	if r.ErrorClass != backends.ErrNone {
		t.Errorf("probe that ran through: error class %q, want none", r.ErrorClass)
	}
}

// A server may list its models to anyone and still refuse every request for the key:
// the probe says so by its error class.
func TestProbeRefusedKey(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := mustNew(t, backends.Config{URL: srv.URL + "/v1"}).Probe(context.Background(), []string{"m"})
	if !r.Reachable || !r.ModelsPresent["m"] || r.ErrorClass != backends.ErrUnauthorized || len(r.Problems) != 1 {
		t.Errorf("probe %+v: want reachable, the model present, and error class %q", r, backends.ErrUnauthorized)
	}
}

// A model list that fails says whether the server was there at all: a refused
// connection, a timeout or an unset key leave it unreachable; a status from the server
// (401, 404, 500) proves it answered. Only a 404 at a url without /v1 gets the /v1 hint.
func TestProbeModelListFailures(t *testing.T) {
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"no"}}`, code)
		}
	}
	hang := make(chan struct{})
	defer close(hang)
	t.Setenv("PLANRUN_TEST_UNSET_KEY", "")
	os.Unsetenv("PLANRUN_TEST_UNSET_KEY")
	for _, c := range []struct {
		name      string
		handler   http.HandlerFunc
		path      string // the url's path after the server's address
		cfg       backends.Config
		reachable bool
		class     backends.ErrorClass
		hint      bool
	}{
		{"401", status(http.StatusUnauthorized), "", backends.Config{}, true, backends.ErrUnauthorized, false},
		{"404 without /v1", status(http.StatusNotFound), "", backends.Config{}, true, backends.ErrNotFound, true},
		{"404 with /v1", status(http.StatusNotFound), "/v1", backends.Config{}, true, backends.ErrNotFound, false},
		{"500", status(http.StatusInternalServerError), "", backends.Config{}, true, backends.ErrServer, false},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, "/v1", backends.Config{Timeouts: backends.Timeouts{Total: 50 * time.Millisecond}}, false, backends.ErrTimeout, false},
		{"unset key", status(http.StatusOK), "/v1", backends.Config{APIKeyEnv: "PLANRUN_TEST_UNSET_KEY"}, false, backends.ErrMissingKey, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			cfg := c.cfg
			cfg.URL = srv.URL + c.path
			r := mustNew(t, cfg).Probe(context.Background(), []string{"m"})
			if r.Reachable != c.reachable || r.ErrorClass != c.class || len(r.Problems) != 1 {
				t.Fatalf("probe %+v: want reachable %v, class %q, one problem", r, c.reachable, c.class)
			}
			if hint := strings.Contains(r.Problems[0], "did you mean "+srv.URL+"/v1?"); hint != c.hint {
				t.Errorf("problem %q: the /v1 hint %v, want %v", r.Problems[0], hint, c.hint)
			}
		})
	}
}

// An adapter built without a kind is the openai kind; one built for a kind that shares
// it (taotoken, a managed vllm) keeps its own, which its rows name.
func TestKindName(t *testing.T) {
	if k := mustNew(t, backends.Config{URL: "http://x.test/v1"}).Kind(); k != "openai" {
		t.Errorf("no kind: Kind() = %q, want openai", k)
	}
	if k := mustNew(t, backends.Config{URL: "http://x.test/v1", Kind: "taotoken"}).Kind(); k != "taotoken" {
		t.Errorf("kind taotoken: Kind() = %q", k)
	}
}

// vLLM's model list gives each model's context as max_model_len; a model listed
// without one (Ollama's /v1/models, a gateway) has no known context, not a context of 0.
func TestContextLengthFromModelList(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"long","max_model_len":4096},{"id":"plain"},{"id":"zero","max_model_len":0}]}`)
	}))
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL + "/v1"})
	for _, c := range []struct {
		model string
		n     int
		ok    bool
	}{{"long", 4096, true}, {"plain", 0, false}, {"zero", 0, false}, {"absent", 0, false}} {
		if n, ok := b.ContextLength(context.Background(), c.model); n != c.n || ok != c.ok {
			t.Errorf("ContextLength(%q) = %d, %v; want %d, %v", c.model, n, ok, c.n, c.ok)
		}
	}
}

// TestResponseIDAndPhases: the response's id and X-Request-Id find the request in the
// server's log, and the phases split its TTFT: a new connection's set-up, then the
// request written, then headers; a second request reuses the connection.
func TestResponseIDAndPhases(t *testing.T) {
	stream := &backendtest.Stream{ContentType: "text/event-stream",
		Parts: backendtest.Split(backendtest.ReadStream(t, "vllm_chat.sse"), "\n\n")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "srv-"+r.Header.Get("Content-Type"))
		stream.ServeHTTP(w, r)
	}))
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL + "/v1"})
	for i, wantNewConn := range []bool{true, false} {
		s := b.Do(context.Background(), backends.Request{ID: "r", Model: "m", Prompt: "hi", MaxTokens: 6})
		if s.Err != nil {
			t.Fatal(s.Err)
		}
		if s.ResponseID != "chatcmpl-8d3a" || s.RequestID != "srv-application/json" {
			t.Errorf("request %d: response id %q, X-Request-Id %q", i, s.ResponseID, s.RequestID)
		}
		if (s.Connect > 0) != wantNewConn {
			t.Errorf("request %d: connect %v, want a new connection: %v", i, s.Connect, wantNewConn)
		}
		send, ok := s.SendDelay()
		if !ok || s.Wrote < s.Connect || s.Wrote > s.Headers || send != s.Wrote-s.Connect {
			t.Errorf("request %d: connect %v, wrote %v (send delay %v, %v), headers %v: want connect <= wrote <= headers",
				i, s.Connect, s.Wrote, send, ok, s.Headers)
		}
	}
}

// TestKeepText: a request that keeps its text gets the answer's content, unescaped and
// without reasoning, on its sample; one that does not gets none.
func TestKeepText(t *testing.T) {
	for _, tt := range []struct{ file, api, text string }{
		{"vllm_chat.sse", "chat", "Hello, world!"},
		{"vllm_completions.sse", "completions", " The sky is blue."},
		{"quirks_no_usage_no_done.sse", "chat", "A\nB日本"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			srv := httptest.NewServer(&backendtest.Stream{ContentType: "text/event-stream",
				Parts: backendtest.Split(backendtest.ReadStream(t, tt.file), "\n\n")})
			defer srv.Close()
			b := mustNew(t, backends.Config{URL: srv.URL + "/v1", API: tt.api})
			for _, keep := range []bool{true, false} {
				s := b.Do(context.Background(), backends.Request{ID: "r1", Model: "m", Prompt: "hi", KeepText: keep})
				want := tt.text
				if !keep {
					want = ""
				}
				if s.Err != nil || s.Text != want {
					t.Errorf("KeepText %v: text %q (error %v), want %q", keep, s.Text, s.Err, want)
				}
			}
		})
	}
}

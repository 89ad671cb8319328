package mockserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/telemetry/procmem"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// fixedClock makes streams byte-stable: a fixed start, 1µs per reading, and waits that
// jump to their deadline.
func fixedClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: time.Microsecond}
}

// serve runs one request through the handler (no network) and renders status, the
// headers a client looks at, and the body.
func serve(t *testing.T, cfg Config, method, path, body string, hdr map[string]string) (string, *Server) {
	t.Helper()
	cfg.clock = fixedClock()
	cfg.RecordTruth = true
	s := New(cfg)
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP %d\n", rec.Code)
	for _, h := range []string{"Content-Type", "Retry-After", "X-Request-Id"} {
		if v := rec.Header().Get(h); v != "" {
			fmt.Fprintf(&out, "%s: %s\n", h, v)
		}
	}
	out.WriteString("\n")
	out.Write(rec.Body.Bytes())
	return out.String(), s
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func TestGoldenStreams(t *testing.T) {
	base := Config{TTFT: 200 * time.Millisecond, TPOT: 20 * time.Millisecond, OutputTokens: 4}
	chat := `{"model":"m","messages":[{"role":"user","content":"count these five prompt words"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":5}`
	tests := []struct {
		name   string
		cfg    Config
		method string
		path   string
		body   string
		hdr    map[string]string
	}{
		{"openai-chat-stream-usage", base, "POST", "/v1/chat/completions", chat, nil},
		{"openai-chat-stream-no-usage", base, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, nil},
		{"openai-chat-coalesced", Config{TPOT: time.Millisecond, TokensPerChunk: 3}, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":8}`,
			map[string]string{"X-Request-Id": "run1/req7"}},
		{"openai-chat-eos", Config{EOSAt: 3}, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":10}`, nil},
		{"openai-chat-ignore-eos", Config{EOSAt: 3}, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":5,"ignore_eos":true}`, nil},
		{"openai-chat-nonstream", base, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"two words"}],"max_tokens":3}`, nil},
		{"openai-completions-stream", base, "POST", "/v1/completions",
			`{"model":"m","prompt":"one two three","stream":true,"stream_options":{"include_usage":true},"max_tokens":3}`, nil},
		{"openai-completions-nonstream", base, "POST", "/v1/completions",
			`{"model":"m","prompt":"one two three","max_tokens":3}`, nil},
		{"openai-unknown-model", Config{Models: []string{"qwen2.5-7b", "llama3"}}, "POST", "/v1/chat/completions",
			`{"model":"gpt-9","messages":[],"stream":true}`, nil},
		{"openai-401", Config{APIKey: "sekret"}, "POST", "/v1/chat/completions",
			`{"model":"m","stream":true}`, map[string]string{"Authorization": "Bearer wrong"}},
		{"openai-429", base, "POST", "/v1/chat/completions", chat, map[string]string{"X-Mock-Fault": "429"}},
		{"openai-503", Config{Faults: Faults{RetryAfter: "7"}}, "POST", "/v1/chat/completions", chat,
			map[string]string{"X-Mock-Fault": "503"}},
		{"openai-malformed", base, "POST", "/v1/chat/completions", chat, map[string]string{"X-Mock-Fault": "malformed"}},
		{"openai-models", Config{Models: []string{"a", "b"}}, "GET", "/v1/models", "", nil},
		{"openai-models-any", Config{}, "GET", "/v1/models", "", nil}, // any name served: a wildcard entry
		{"ollama-chat-stream", base, "POST", "/api/chat",
			`{"model":"m","messages":[{"role":"user","content":"three prompt words"}],"options":{"num_predict":3}}`, nil},
		{"ollama-chat-nonstream", base, "POST", "/api/chat",
			`{"model":"m","messages":[{"role":"user","content":"three prompt words"}],"stream":false}`, nil},
		{"ollama-generate-stream", Config{TTFT: time.Second, TPOT: 10 * time.Millisecond, TokensPerChunk: 2, EOSAt: 4},
			"POST", "/api/generate", `{"model":"m","prompt":"why is the sky blue"}`, nil},
		{"ollama-unknown-model", Config{Models: []string{"tiny"}}, "POST", "/api/generate",
			`{"model":"huge","prompt":"x"}`, nil},
		{"ollama-tags", Config{Models: []string{"tiny"}}, "GET", "/api/tags", "", nil},
		{"ollama-ps", Config{Models: []string{"tiny"}}, "GET", "/api/ps", "", nil},
		{"ollama-show", Config{}, "POST", "/api/show", `{"model":"mock"}`, nil},
		{"metrics", Config{QueueSlots: 4}, "GET", "/metrics", "", nil},
		// The Messages API: a thinking block then a text block, a chunk straddling the two;
		// the cached prompt words come apart in cache_read_input_tokens.
		{"messages-stream", Config{TPOT: time.Millisecond, TokensPerChunk: 2, ReasoningTokens: 2, PrefixCache: true}, "POST", "/v1/messages",
			`{"model":"m","system":"be brief","messages":[{"role":"user","content":"count these five prompt words"}],"stream":true,"max_tokens":5}`, nil},
		{"messages-nonstream", base, "POST", "/v1/messages",
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"two words"}]}],"max_tokens":3}`, nil},
		{"messages-529", base, "POST", "/v1/messages", `{"model":"m","messages":[],"max_tokens":3,"stream":true}`,
			map[string]string{"X-Mock-Fault": "503"}},
		// Tool calls: the tokens are the call's arguments, on the same schedule.
		{"openai-chat-tool-call", Config{TPOT: time.Millisecond, TokensPerChunk: 2}, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"weather?"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":3,` +
				`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"days":{"type":"integer"},"city":{"type":"string"}}}}}],"tool_choice":"required"}`, nil},
		{"messages-tool-use", Config{TPOT: time.Millisecond, TokensPerChunk: 2}, "POST", "/v1/messages",
			`{"model":"m","messages":[{"role":"user","content":"weather?"}],"stream":true,"max_tokens":3,` +
				`"tools":[{"name":"now","input_schema":{"type":"object"}},{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],"tool_choice":{"type":"tool","name":"get_weather"}}`, nil},
		{"ollama-chat-tool-call", Config{TPOT: time.Millisecond, ToolCallRate: 1}, "POST", "/api/chat",
			`{"model":"m","messages":[{"role":"user","content":"weather?"}],"options":{"num_predict":3},` +
				`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`, nil},
		{"openai-chat-tool-none", Config{TPOT: time.Millisecond, ToolCallRate: 1}, "POST", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"weather?"}],"stream":true,"max_tokens":2,` +
				`"tools":[{"type":"function","function":{"name":"get_weather"}}],"tool_choice":"none"}`, nil},
		{"messages-401", Config{APIKey: "sekret"}, "POST", "/v1/messages",
			`{"model":"m","stream":true}`, map[string]string{"X-Api-Key": "wrong"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := serve(t, tt.cfg, tt.method, tt.path, tt.body, tt.hdr)
			checkGolden(t, tt.name, got)
		})
	}
}

// TestTruthMatchesSchedule: every chunk is due exactly when Schedule says, and the
// fake clock writes it then; the done line's timings agree with the truth.
func TestTruthMatchesSchedule(t *testing.T) {
	cfg := Config{TTFT: 100 * time.Millisecond, TPOT: 10 * time.Millisecond, Jitter: 3 * time.Millisecond,
		TokensPerChunk: 2, Seed: 42}
	_, s := serve(t, cfg, "POST", "/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"a b c"}],"stream":true,"max_tokens":9}`, nil)
	tr, ok := s.Truth("req-1")
	if !ok {
		t.Fatal("no truth recorded for req-1")
	}
	sched := cfg.Schedule(1, 9)
	if tr.OutputTokens != 9 || tr.PromptTokens != 3 || !tr.Complete || tr.FinishReason != "length" {
		t.Fatalf("truth = %+v", tr)
	}
	wantTokens := []int{1, 2, 2, 2, 2} // first chunk one token, then TokensPerChunk
	if len(tr.Chunks) != len(wantTokens) {
		t.Fatalf("%d chunks, want %d", len(tr.Chunks), len(wantTokens))
	}
	last := -1
	for i, c := range tr.Chunks {
		last += c.Tokens
		if c.Tokens != wantTokens[i] {
			t.Errorf("chunk %d carries %d tokens, want %d", i, c.Tokens, wantTokens[i])
		}
		if want := tr.Admitted.Add(sched[last]); !c.Due.Equal(want) {
			t.Errorf("chunk %d due %v, want %v", i, c.Due.Sub(tr.Admitted), sched[last])
		}
		if c.Writing.Before(c.Due) || c.Written.Before(c.Writing) {
			t.Errorf("chunk %d: writing at %v, written at %v after it was due: want 0 ≤ writing ≤ written", i, c.Writing.Sub(c.Due), c.Written.Sub(c.Due))
		}
	}
	ttft, _ := tr.TTFT()
	if d := ttft - sched[0]; d < 0 || d > 10*time.Microsecond { // fake clock: a few 1µs steps
		t.Errorf("truth TTFT %v, schedule %v", ttft, sched[0])
	}
}

func TestScheduleJitter(t *testing.T) {
	cfg := Config{TTFT: 50 * time.Millisecond, TPOT: 10 * time.Millisecond, Jitter: 4 * time.Millisecond, Seed: 7}
	a, b := cfg.Schedule(3, 200), cfg.Schedule(3, 200)
	other := Config{TTFT: cfg.TTFT, TPOT: cfg.TPOT, Jitter: cfg.Jitter, Seed: 8}.Schedule(3, 200)
	same, moved := true, false
	for i := range a {
		same = same && a[i] == b[i]
		moved = moved || a[i] != other[i]
		gap, base := a[i], cfg.TTFT
		if i > 0 {
			gap, base = a[i]-a[i-1], cfg.TPOT
		}
		if gap < base-cfg.Jitter || gap > base+cfg.Jitter {
			t.Errorf("gap %d = %v, outside %v ± %v", i, gap, base, cfg.Jitter)
		}
	}
	if !same {
		t.Error("same seed and request number gave different schedules")
	}
	if !moved {
		t.Error("a different seed gave the same jittered schedule")
	}
	flat := Config{TTFT: 5 * time.Millisecond, TPOT: time.Millisecond}.Schedule(1, 4)
	want := []time.Duration{5 * time.Millisecond, 6 * time.Millisecond, 7 * time.Millisecond, 8 * time.Millisecond}
	for i := range want {
		if flat[i] != want[i] {
			t.Errorf("no jitter: token %d due %v, want %v", i, flat[i], want[i])
		}
	}
}

func TestLength(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		p          params
		wantN      int
		wantReason string
	}{
		{"default", Config{OutputTokens: 128}, params{}, 128, "length"},
		{"max_tokens caps", Config{OutputTokens: 128}, params{maxTokens: 16}, 16, "length"},
		{"eos before cap", Config{OutputTokens: 128, EOSAt: 10}, params{maxTokens: 16}, 10, "stop"},
		{"cap before eos", Config{OutputTokens: 128, EOSAt: 10}, params{maxTokens: 4}, 4, "length"},
		{"eos at cap stops", Config{OutputTokens: 128, EOSAt: 10}, params{maxTokens: 10}, 10, "stop"},
		{"ignore_eos", Config{OutputTokens: 128, EOSAt: 10}, params{maxTokens: 16, ignoreEOS: true}, 16, "length"},
		{"min_tokens delays eos", Config{OutputTokens: 128, EOSAt: 10}, params{maxTokens: 16, minTokens: 12}, 12, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, reason := tt.cfg.length(tt.p)
			if n != tt.wantN || reason != tt.wantReason {
				t.Errorf("length = %d %q, want %d %q", n, reason, tt.wantN, tt.wantReason)
			}
		})
	}
}

func TestCountWords(t *testing.T) {
	for in, want := range map[string]int{"": 0, "one": 1, "  two  words ": 2, "a\nb\tc\r\nd": 4} {
		if got := countWords(in); got != want {
			t.Errorf("countWords(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestFaultsDeterministic(t *testing.T) {
	f := Faults{RateLimited: 0.1, Internal: 0.05, StreamCut: 0.1, Stall: 0.05}
	counts := map[Fault]int{}
	for n := uint64(1); n <= 20000; n++ {
		a := f.FaultFor(99, n)
		if b := f.FaultFor(99, n); a != b {
			t.Fatalf("request %d: %q then %q", n, a, b)
		}
		counts[a]++
	}
	want := map[Fault]float64{FaultRateLimited: 0.1, FaultInternal: 0.05, FaultStreamCut: 0.1, FaultStall: 0.05, FaultNone: 0.7}
	for fault, p := range want {
		if got := float64(counts[fault]) / 20000; got < p-0.015 || got > p+0.015 {
			t.Errorf("fault %q drawn at rate %.3f, configured %.2f", fault, got, p)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("faults drawn %v, want only %v", counts, want)
	}
	differs := false
	for n := uint64(1); n <= 100; n++ {
		differs = differs || f.FaultFor(99, n) != f.FaultFor(100, n)
	}
	if !differs {
		t.Error("seeds 99 and 100 chose the same faults for 100 requests")
	}
}

// TestFaultsOnTheWire: two servers with the same seed answer the same request sequence
// with the same statuses, and the statuses are the faults FaultFor predicts.
func TestFaultsOnTheWire(t *testing.T) {
	cfg := Config{Seed: 5, OutputTokens: 3, Faults: Faults{Forbidden: 0.2, RateLimited: 0.2, Unavailable: 0.2}}
	status := map[Fault]int{FaultNone: 200, FaultForbidden: 403, FaultRateLimited: 429, FaultUnavailable: 503}
	for round := 0; round < 2; round++ {
		s := New(cfg)
		for n := uint64(1); n <= 30; n++ {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/generate", strings.NewReader(`{"model":"m","prompt":"x"}`)))
			want := status[cfg.Faults.FaultFor(cfg.Seed, n)]
			if rec.Code != want {
				t.Fatalf("round %d request %d: status %d, want %d", round, n, rec.Code, want)
			}
			if (want == 429 || want == 503) && rec.Header().Get("Retry-After") != "1" {
				t.Errorf("request %d: Retry-After %q", n, rec.Header().Get("Retry-After"))
			}
		}
	}
}

// TestStreamCut: the connection is aborted after AfterChunks content chunks, so the
// client sees an unexpected EOF rather than a clean end.
func TestStreamCut(t *testing.T) {
	s := New(Config{OutputTokens: 10, RecordTruth: true, Faults: Faults{StreamCut: 1, AfterChunks: 3}})
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error %v, want unexpected EOF", err)
	}
	if n := bytes.Count(body, []byte(`"delta":{"content":`)); n != 3 {
		t.Errorf("%d content chunks before the cut, want 3:\n%s", n, body)
	}
	if bytes.Contains(body, []byte("[DONE]")) {
		t.Error("a cut stream carried [DONE]")
	}
	tr, _ := s.Truth("req-1")
	if tr.Complete || len(tr.Chunks) != 3 || tr.Fault != FaultStreamCut {
		t.Errorf("truth = complete %v, %d chunks, fault %q", tr.Complete, len(tr.Chunks), tr.Fault)
	}
}

// TestStall: the chunk after the stall is written StallFor after the one before it,
// however early it was due (fake clock, so exact).
func TestStall(t *testing.T) {
	cfg := Config{TPOT: time.Millisecond, OutputTokens: 5, Faults: Faults{Stall: 1, AfterChunks: 2, StallFor: 30 * time.Second}}
	_, s := serve(t, cfg, "POST", "/api/chat", `{"model":"m","messages":[]}`, nil)
	tr, _ := s.Truth("req-1")
	if len(tr.Chunks) != 5 || !tr.Complete {
		t.Fatalf("truth: %d chunks, complete %v", len(tr.Chunks), tr.Complete)
	}
	if gap := tr.Chunks[2].Written.Sub(tr.Chunks[1].Written); gap < 30*time.Second {
		t.Errorf("gap across the stall %v, want at least 30s", gap)
	}
	if gap := tr.Chunks[1].Written.Sub(tr.Chunks[0].Written); gap > time.Second {
		t.Errorf("gap before the stall %v", gap)
	}
}

// TestQueueSlots: with one slot, requests decode one after another: each is admitted
// only after the previous one wrote its last chunk, so TTFT grows with concurrency.
func TestQueueSlots(t *testing.T) {
	s := New(Config{TTFT: 5 * time.Millisecond, TPOT: time.Millisecond, OutputTokens: 4, QueueSlots: 1, RecordTruth: true})
	// The three requests reach the mock together, so the slot is contended however the
	// client goroutines happen to be scheduled.
	var arrived sync.WaitGroup
	arrived.Add(3)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		arrived.Wait()
		s.ServeHTTP(w, r)
	}))
	defer ts.Close()
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(ts.URL+"/v1/completions", "application/json",
				strings.NewReader(`{"model":"m","prompt":"x","stream":true}`))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	trs := s.Truths()
	if len(trs) != 3 {
		t.Fatalf("%d truths, want 3", len(trs))
	}
	// In order of admission, each request is admitted only once the one before has
	// written its last chunk, and its TTFT counts the wait for the slot.
	slices.SortFunc(trs, func(a, b Truth) int { return a.Admitted.Compare(b.Admitted) })
	waited := 0
	for i, b := range trs {
		ttft, _ := b.TTFT()
		if queued := b.Admitted.Sub(b.Received); ttft < queued+5*time.Millisecond {
			t.Errorf("request %d: TTFT %v does not count its %v in the queue", b.Number, ttft, queued)
		}
		if i == 0 {
			continue
		}
		a := trs[i-1]
		last := a.Chunks[len(a.Chunks)-1].Written
		if b.Admitted.Before(last) {
			t.Errorf("request %d admitted while %d still decoding", b.Number, a.Number)
		}
		if b.Received.Before(last) {
			waited++
		}
	}
	if waited == 0 {
		t.Errorf("no request arrived while another held the slot: the queue was not exercised")
	}
}

// TestClientGoneStopsStream: a client that leaves frees the stream goroutine and its slot.
func TestClientGoneStopsStream(t *testing.T) {
	s := New(Config{TPOT: time.Hour, OutputTokens: 3, QueueSlots: 1, RecordTruth: true})
	ts := httptest.NewServer(s)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/api/generate", strings.NewReader(`{"model":"m","prompt":"x"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n') // first token at TTFT 0
	if err != nil || !strings.Contains(line, `"done":false`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	resp.Body.Close()
	for s.Stats().Running != 0 { // the handler notices the closed connection
		time.Sleep(time.Millisecond)
	}
	tr, _ := s.Truth("req-1")
	if !tr.Canceled || tr.Complete {
		t.Errorf("truth canceled %v complete %v", tr.Canceled, tr.Complete)
	}
}

func TestStartStop(t *testing.T) {
	s := New(Config{})
	url, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"version":"` + Version() + `"}`; string(b) != want || !strings.HasPrefix(Version(), "mock-") {
		t.Errorf("/version = %s, want %s", b, want)
	}
	stop()
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("server still answers after stop")
	}
}

func TestValidate(t *testing.T) {
	bad := []Config{
		{TPOT: -1},
		{Faults: Faults{StreamCut: 1.5}},
		{Faults: Faults{RateLimited: 0.6, Internal: 0.6}},
		{QueueSlots: -1},
	}
	for i, c := range bad {
		if c.Validate() == nil {
			t.Errorf("config %d validated: %+v", i, c)
		}
	}
	if err := (Config{Faults: Faults{RateLimited: 0.5, Internal: 0.5}}).Validate(); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
}

// A configured version is what both protocols' version endpoints report, so a test can
// play a server upgrade.
func TestConfiguredVersion(t *testing.T) {
	srv := httptest.NewServer(New(Config{Version: "0.9.2"}))
	defer srv.Close()
	for _, path := range []string{"/version", "/api/version"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != `{"version":"0.9.2"}` {
			t.Errorf("%s = %s", path, b)
		}
	}
}

// HoldBytes is resident in the server's process from New on: what a memory test reads.
func TestHoldBytesIsResident(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resident memory is read from /proc, which only Linux has")
	}
	const hold = 64 << 20
	// Memory an earlier test (or an earlier -count) freed would otherwise be reused
	// while still resident, and the RSS would not grow.
	debug.FreeOSMemory()
	before := procmem.Read([]int{os.Getpid()}).RSS
	s := New(Config{HoldBytes: hold})
	after := procmem.Read([]int{os.Getpid()}).RSS
	got := float64(after) - float64(before)
	if math.Abs(got-hold)/hold > 0.05 {
		t.Errorf("RSS grew by %.1f MiB with HoldBytes %d MiB", got/(1<<20), hold>>20)
	}
	runtime.KeepAlive(s)
	if err := (Config{HoldBytes: -1}).Validate(); err == nil {
		t.Error("a negative HoldBytes passed Validate")
	}
}

func TestSchedulePhases(t *testing.T) {
	ms := time.Millisecond
	cfg := Config{TTFT: 5 * ms, TPOT: ms, Phases: []Phase{{From: 3, Timing: Timing{TTFT: 5 * ms, TPOT: 4 * ms}},
		{From: 5, Timing: Timing{TTFT: 7 * ms, TPOT: 2 * ms}}}}
	tests := []struct {
		n    uint64
		want []time.Duration
	}{
		{1, []time.Duration{5 * ms, 6 * ms, 7 * ms}},
		{2, []time.Duration{5 * ms, 6 * ms, 7 * ms}},
		{3, []time.Duration{5 * ms, 9 * ms, 13 * ms}},
		{4, []time.Duration{5 * ms, 9 * ms, 13 * ms}},
		{5, []time.Duration{7 * ms, 9 * ms, 11 * ms}},
		{9, []time.Duration{7 * ms, 9 * ms, 11 * ms}},
	}
	for _, tt := range tests {
		if got := cfg.Schedule(tt.n, 3); !slices.Equal(got, tt.want) {
			t.Errorf("request %d: schedule %v, want %v", tt.n, got, tt.want)
		}
	}
	if err := (Config{Phases: []Phase{{From: 2, Timing: Timing{TPOT: -ms}}}}).Validate(); err == nil {
		t.Error("a phase's negative TPOT validated")
	}
}

package backends_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

// The timing core's own tests: a scripted adapter (one JSON line per chunk, each field a
// Chunk field) over backendtest's replaying transport and hand-moved clock, so every
// stamp, count and error class the core records is asserted exactly.

// line is one scripted stream event.
type line struct {
	Text      string                  `json:"text,omitempty"` // raw (still escaped) content
	Reasoning string                  `json:"reasoning,omitempty"`
	Finish    string                  `json:"finish,omitempty"`
	Done      bool                    `json:"done,omitempty"`
	Tokens    backends.TokenSource    `json:"tokens,omitempty"`
	Out       int                     `json:"out,omitempty"`
	Prompt    int                     `json:"prompt,omitempty"`
	RTok      int                     `json:"rtok,omitempty"`
	Server    *backends.ServerTimings `json:"server,omitempty"`
	ID        string                  `json:"id,omitempty"`
	Malformed bool                    `json:"malformed,omitempty"` // the decoder fails with ErrMalformed
	Fail      string                  `json:"fail,omitempty"`      // the decoder fails with a plain error
}

func (l line) bytes() []byte {
	b, _ := json.Marshal(l)
	return append(b, '\n')
}

// at scripts the lines to arrive at the given offsets.
func at(pairs ...any) []backendtest.Segment {
	var segs []backendtest.Segment
	for i := 0; i < len(pairs); i += 2 {
		segs = append(segs, backendtest.Segment{At: pairs[i].(time.Duration), Data: pairs[i+1].(line).bytes()})
	}
	return segs
}

// lineAdapter is the smallest Adapter over a Core.
type lineAdapter struct {
	core   *backends.Core
	reqErr error // NewRequest fails with it when set

	mu        sync.Mutex
	explained []backends.Error
}

func (a *lineAdapter) NewRequest(ctx context.Context, req backends.Request) (*http.Request, error) {
	if a.reqErr != nil {
		return nil, a.reqErr
	}
	body, _ := json.Marshal(map[string]any{"model": req.Model, "prompt": req.Prompt})
	return a.core.NewPost(ctx, a.core.URL()+"/gen", body, "application/x-ndjson", map[string]string{"X-Test": "1"})
}

func (a *lineAdapter) NewDecoder(r *bufio.Reader) backends.Decoder {
	return &lineDecoder{lr: backends.LineReader{R: r}}
}

// Explain notes the errors it was shown and adds a sentence, as an adapter's model list does.
func (a *lineAdapter) Explain(_ context.Context, e *backends.Error, _ backends.Request) {
	a.mu.Lock()
	a.explained = append(a.explained, *e)
	a.mu.Unlock()
	e.Message += " (explained)"
}

type lineDecoder struct {
	lr backends.LineReader
	id string
}

func (d *lineDecoder) Next(c *backends.Chunk) error {
	b, err := d.lr.ReadLine()
	if err != nil {
		return err
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	switch {
	case l.Malformed:
		return &backends.Error{Class: backends.ErrMalformed, Message: "bad chunk " + backends.Excerpt(b)}
	case l.Fail != "":
		return errors.New(l.Fail)
	}
	if l.ID != "" {
		d.id = l.ID
	}
	c.Text, c.Content = len(l.Text), []byte(l.Text)
	c.Reasoning = len(l.Reasoning)
	c.FinishReason, c.Done = l.Finish, l.Done
	c.Tokens, c.OutputTokens, c.PromptTokens, c.ReasoningTokens = l.Tokens, l.Out, l.Prompt, l.RTok
	c.Server = l.Server
	return nil
}

func (d *lineDecoder) ResponseID() string { return d.id }

// wholeAdapter also has a whole-response decoder: one chunk of the body's length.
type wholeAdapter struct{ *lineAdapter }

func (a *wholeAdapter) NewWholeDecoder(r *bufio.Reader) backends.Decoder { return &wholeDecoder{r: r} }

type wholeDecoder struct{ r *bufio.Reader }

func (d *wholeDecoder) Next(c *backends.Chunk) error {
	b, err := io.ReadAll(d.r)
	if err != nil {
		return err
	}
	c.Text, c.Content, c.Done = len(b), b, true
	return nil
}

// newReplayCore is a Core over a replaying transport moving clk; the adapter is built on it.
func newReplayCore(cfg backends.Config, rt http.RoundTripper, clk backends.Clock) (*backends.Core, *lineAdapter) {
	if cfg.URL == "" {
		cfg.URL = "http://backend.test"
	}
	if cfg.Name == "" {
		cfg.Name = "line.t"
	}
	c := backends.NewCore(cfg, backends.WithHTTPClient(&http.Client{Transport: rt}), backends.WithClock(clk))
	return c, &lineAdapter{core: c}
}

const ms = time.Millisecond

func TestDoStampsEveryChunkOnItsClock(t *testing.T) {
	clk := backendtest.NewClock()
	rp := &backendtest.Replay{Clock: clk, HeadersAt: 5 * ms,
		Header: http.Header{"X-Request-Id": {"req-9"}},
		Segments: at(
			10*ms, line{ID: "resp-1"}, // role-only: no token
			20*ms, line{Text: "ab"},
			35*ms, line{Reasoning: "xyz"},
			50*ms, line{Text: "cde"},
			60*ms, line{Finish: "length"},
			70*ms, line{Tokens: backends.TokensUsage, Out: 3, Prompt: 7, RTok: 1},
			80*ms, line{Done: true},
			90*ms, line{Text: "after the end marker"},
		)}
	c, a := newReplayCore(backends.Config{}, rp, clk)
	s := c.Do(context.Background(), a, backends.Request{ID: "r1", Model: "m", MaxTokens: 4})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	want := backends.Sample{ID: "r1", Start: backendtest.Epoch, ResponseID: "resp-1", RequestID: "req-9",
		Headers: 5 * ms, FirstByte: 5 * ms, FirstToken: 20 * ms, FirstAnswer: 20 * ms, End: 50 * ms,
		// The body ends with what follows the end marker, read so the connection is reused.
		BodyEnd:       90 * ms,
		ChunkArrivals: []time.Duration{20 * ms, 35 * ms, 50 * ms},
		OutputTokens:  3, TokenSource: backends.TokensUsage, PromptTokens: 7, Chunks: 2,
		ReasoningChunks: 1, ReasoningTokens: 1, ReasoningTokenSource: backends.TokensUsage,
		TextBytes: 5, ReasoningBytes: 3, FinishReason: "length"}
	assertSample(t, s, want)
	if got := cap(s.ChunkArrivals); got != 5 {
		t.Errorf("arrivals allocated for %d chunks, want MaxTokens+1 = 5 (one allocation per request)", got)
	}
	if len(a.explained) != 0 {
		t.Errorf("Explain called on a success: %v", a.explained)
	}
}

func assertSample(t *testing.T, got, want backends.Sample) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("sample\n got %s\nwant %s", g, w)
	}
}

// Without a server count the core counts content chunks (reasoning included) and says
// so; a finish reason completes the stream, so the EOF after it is no cut.
func TestDoCountsChunksWhenTheServerGivesNoCount(t *testing.T) {
	clk := backendtest.NewClock()
	rp := &backendtest.Replay{Clock: clk, HeadersAt: 2 * ms, EndAt: 40 * ms, Segments: at(
		10*ms, line{Reasoning: "hm"},
		20*ms, line{Text: "a"},
		30*ms, line{Text: "b", Finish: "stop", Server: &backends.ServerTimings{EvalCount: 9}},
	)}
	c, a := newReplayCore(backends.Config{}, rp, clk)
	s := c.Do(context.Background(), a, backends.Request{ID: "r"})
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if s.TokenSource != backends.TokensChunks || s.OutputTokens != 3 || s.ReasoningTokens != 1 || s.Chunks != 2 {
		t.Fatalf("tokens %d (%s), reasoning %d, chunks %d; want 3 (chunks), 1, 2", s.OutputTokens, s.TokenSource, s.ReasoningTokens, s.Chunks)
	}
	if s.End != 30*ms || s.FirstToken != 10*ms {
		t.Fatalf("first token %v, end %v; want 10ms (the reasoning chunk) and 30ms (the last content, not the EOF)", s.FirstToken, s.End)
	}
	if s.Server == nil || s.Server.EvalCount != 9 {
		t.Fatalf("server timings %+v, want the chunk's", s.Server)
	}
	if got := cap(s.ChunkArrivals); got != 64 {
		t.Errorf("arrivals allocated for %d chunks without MaxTokens, want 64", got)
	}
}

// A usage object completes the stream as a finish reason does.
func TestDoUsageCompletesTheStream(t *testing.T) {
	clk := backendtest.NewClock()
	rp := &backendtest.Replay{Clock: clk, Segments: at(
		10*ms, line{Text: "a"},
		20*ms, line{Tokens: backends.TokensServer, Out: 1},
	)}
	c, a := newReplayCore(backends.Config{}, rp, clk)
	s := c.Do(context.Background(), a, backends.Request{ID: "r", MaxTokens: 1 << 16})
	if s.Err != nil || s.TokenSource != backends.TokensServer || s.OutputTokens != 1 {
		t.Fatalf("err %v, tokens %d (%s); want no error, 1 (server)", s.Err, s.OutputTokens, s.TokenSource)
	}
	if got := cap(s.ChunkArrivals); got != 64 {
		t.Errorf("MaxTokens 65536 preallocated %d arrivals, want the default 64 (a huge limit is no size hint)", got)
	}
	s = c.Do(context.Background(), a, backends.Request{ID: "r", MaxTokens: 1<<16 - 1})
	if got := cap(s.ChunkArrivals); got != 1<<16 {
		t.Errorf("MaxTokens 65535 preallocated %d arrivals, want 65536", got)
	}
}

// A stream with no content at all ends where its end marker or EOF arrived.
func TestDoEndOfAnEmptyStream(t *testing.T) {
	for _, c := range []struct {
		name string
		rp   *backendtest.Replay
		end  time.Duration
	}{
		{"done line", &backendtest.Replay{Segments: at(10*ms, line{}, 25*ms, line{Done: true})}, 25 * ms},
		{"finish then EOF", &backendtest.Replay{EndAt: 33 * ms, Segments: at(10*ms, line{Finish: "stop"})}, 33 * ms},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := backendtest.NewClock()
			c.rp.Clock = clk
			core, a := newReplayCore(backends.Config{}, c.rp, clk)
			s := core.Do(context.Background(), a, backends.Request{ID: "r"})
			if s.Err != nil || s.End != c.end || s.OutputTokens != 0 || s.TokenSource != backends.TokensChunks {
				t.Fatalf("err %v, end %v, tokens %d (%s); want none, %v, 0 (chunks)", s.Err, s.End, s.OutputTokens, s.TokenSource, c.end)
			}
		})
	}
}

// KeepText gathers the content (not reasoning) and unescapes it once.
func TestDoKeepsTheAnswerText(t *testing.T) {
	segs := at(10*ms, line{Text: "he"}, 20*ms, line{Reasoning: "not this"}, 30*ms, line{Text: `llo\n`}, 40*ms, line{Done: true})
	for _, keep := range []bool{true, false} {
		clk := backendtest.NewClock()
		c, a := newReplayCore(backends.Config{}, &backendtest.Replay{Clock: clk, Segments: segs}, clk)
		s := c.Do(context.Background(), a, backends.Request{ID: "r", KeepText: keep})
		want := ""
		if keep {
			want = "hello\n"
		}
		if s.Err != nil || s.Text != want {
			t.Fatalf("KeepText %v: text %q (err %v), want %q", keep, s.Text, s.Err, want)
		}
	}
}

// A non-streamed request uses the adapter's whole-response decoder where it has one.
func TestDoNoStreamUsesTheWholeDecoder(t *testing.T) {
	for _, noStream := range []bool{true, false} {
		clk := backendtest.NewClock()
		rp := &backendtest.Replay{Clock: clk, Segments: at(10*ms, line{Text: "abc"}, 20*ms, line{Done: true})}
		c, la := newReplayCore(backends.Config{}, rp, clk)
		a := &wholeAdapter{lineAdapter: la}
		s := c.Do(context.Background(), a, backends.Request{ID: "r", NoStream: noStream})
		wantBytes := 3
		if noStream {
			wantBytes = len(line{Text: "abc"}.bytes()) + len(line{Done: true}.bytes())
		}
		if s.Err != nil || s.TextBytes != wantBytes || s.Unstreamed != noStream {
			t.Fatalf("NoStream %v: %d text bytes, unstreamed %v (err %v); want %d, %v", noStream, s.TextBytes, s.Unstreamed, s.Err, wantBytes, noStream)
		}
	}
}

// A stream that ends before its end marker is cut, with what was measured kept; a
// decoder's own *Error keeps its class, any other error is a cut.
func TestDoStreamCut(t *testing.T) {
	for _, c := range []struct {
		name    string
		segs    []backendtest.Segment
		class   backends.ErrorClass
		message string
		chunks  int
		bodyEnd time.Duration
	}{
		{"EOF", at(10*ms, line{Text: "a"}, 20*ms, line{Text: "b"}), backends.ErrStreamCut,
			"stream_cut: the stream was cut mid-way after 2 content chunks, before its end marker (finish_reason, usage, [DONE] or done line): the body ended (explained)", 2, 50 * ms},
		{"decoder error", at(10*ms, line{Text: "a"}, 20*ms, line{Fail: "connection reset by peer"}), backends.ErrStreamCut,
			"stream_cut: the stream was cut mid-way after 1 content chunks, before its end marker (finish_reason, usage, [DONE] or done line): connection reset by peer (explained)", 1, 20 * ms},
		{"malformed", at(10*ms, line{Malformed: true}), backends.ErrMalformed,
			`malformed: bad chunk "{\"malformed\":true}" (explained)`, 0, 10 * ms},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := backendtest.NewClock()
			rp := &backendtest.Replay{Clock: clk, EndAt: 50 * ms, Segments: c.segs}
			core, a := newReplayCore(backends.Config{}, rp, clk)
			s := core.Do(context.Background(), a, backends.Request{ID: "r"})
			if s.Err == nil || s.Err.Class != c.class || s.Err.Error() != c.message {
				t.Fatalf("error %v, want %q", s.Err, c.message)
			}
			if s.Chunks != c.chunks || s.OutputTokens != c.chunks || s.TokenSource != backends.TokensChunks {
				t.Fatalf("%d chunks, %d tokens (%s) kept; want %d (chunks)", s.Chunks, s.OutputTokens, s.TokenSource, c.chunks)
			}
			if len(a.explained) != 1 {
				t.Fatalf("Explain called %d times, want once", len(a.explained))
			}
			wantEnd := time.Duration(c.chunks) * 10 * ms
			if c.chunks == 0 {
				wantEnd = 10 * ms // the failing chunk's arrival
			}
			if s.End != wantEnd {
				t.Fatalf("end %v, want %v", s.End, wantEnd)
			}
			// A failed request's body ends where the core gave up on it: the clock then.
			if s.BodyEnd != c.bodyEnd {
				t.Fatalf("body end %v, want %v", s.BodyEnd, c.bodyEnd)
			}
		})
	}
}

// A response with no reasoning has no reasoning count and no source for one, whether the
// server counted its tokens or the core counted chunks.
func TestDoNoReasoningNoReasoningSource(t *testing.T) {
	for _, c := range []struct {
		name   string
		last   line
		tokens backends.TokenSource
	}{
		{"usage", line{Tokens: backends.TokensUsage, Out: 2, Prompt: 3}, backends.TokensUsage},
		{"chunks", line{Finish: "stop"}, backends.TokensChunks},
	} {
		clk := backendtest.NewClock()
		rp := &backendtest.Replay{Clock: clk, Segments: at(10*ms, line{Text: "a"}, 20*ms, line{Text: "b"}, 30*ms, c.last)}
		core, a := newReplayCore(backends.Config{}, rp, clk)
		s := core.Do(context.Background(), a, backends.Request{ID: "r"})
		if s.Err != nil || s.TokenSource != c.tokens || s.OutputTokens != 2 {
			t.Fatalf("%s: err %v, tokens %d (%s); want 2 (%s)", c.name, s.Err, s.OutputTokens, s.TokenSource, c.tokens)
		}
		if s.ReasoningTokens != 0 || s.ReasoningTokenSource != "" || s.ReasoningChunks != 0 {
			t.Errorf("%s: reasoning %d tokens (%q), %d chunks; want none and no source", c.name, s.ReasoningTokens, s.ReasoningTokenSource, s.ReasoningChunks)
		}
	}
}

// tap records the requests it forwards.
type tap struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	reqs []*http.Request
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.reqs = append(t.reqs, r)
	t.mu.Unlock()
	return t.rt.RoundTrip(r)
}

func TestDoSendsTheKeyAndHeaders(t *testing.T) {
	clk := backendtest.NewClock()
	tp := &tap{rt: &backendtest.Replay{Clock: clk, Segments: at(10*ms, line{Done: true})}}
	cfg := backends.Config{APIKeyEnv: "LINE_KEY", Getenv: env{"LINE_KEY": "sk-1"}.get}
	c, a := newReplayCore(cfg, tp, clk)
	if s := c.Do(context.Background(), a, backends.Request{ID: "r"}); s.Err != nil {
		t.Fatal(s.Err)
	}
	h := tp.reqs[0].Header
	for k, v := range map[string]string{"Authorization": "Bearer sk-1", "Content-Type": "application/json",
		"Accept": "application/x-ndjson", "X-Test": "1"} {
		if h.Get(k) != v {
			t.Errorf("header %s: %q, want %q", k, h.Get(k), v)
		}
	}
	if tp.reqs[0].Method != http.MethodPost || tp.reqs[0].URL.String() != "http://backend.test/gen" {
		t.Errorf("sent %s %s", tp.reqs[0].Method, tp.reqs[0].URL)
	}

	c, a = newReplayCore(backends.Config{}, tp, clk)
	c.Do(context.Background(), a, backends.Request{ID: "r"})
	if got := tp.reqs[1].Header.Get("Authorization"); got != "" {
		t.Errorf("no key configured, yet Authorization %q was sent", got)
	}
}

type env map[string]string

func (e env) get(k string) string { return e[k] }

// An unset key variable fails every request before anything is sent.
func TestDoMissingKey(t *testing.T) {
	clk := backendtest.NewClock()
	clk.Set(backendtest.Epoch.Add(time.Hour))
	tp := &tap{rt: &backendtest.Replay{Clock: clk}}
	c, a := newReplayCore(backends.Config{APIKeyEnv: "LINE_KEY", Getenv: env{}.get}, tp, clk)
	s := c.Do(context.Background(), a, backends.Request{ID: "r"})
	want := "missing_key: environment variable LINE_KEY is not set: backend line.t reads its API key from it (api_key_env); export it before running (explained)"
	if s.Err == nil || s.Err.Error() != want {
		t.Fatalf("error %v, want %q", s.Err, want)
	}
	if !s.Start.Equal(backendtest.Epoch.Add(time.Hour)) || len(tp.reqs) != 0 {
		t.Fatalf("start %v, %d requests sent; want the clock's reading and none", s.Start, len(tp.reqs))
	}
}

// The key comes from the process environment when no Getenv is injected.
func TestNewCoreReadsTheProcessEnvironment(t *testing.T) {
	t.Setenv("PLANRUN_LINE_TEST_KEY", "sk-env")
	c := backends.NewCore(backends.Config{Name: "line.t", URL: "http://x", APIKeyEnv: "PLANRUN_LINE_TEST_KEY"})
	h := http.Header{}
	c.Authorize(h)
	if h.Get("Authorization") != "Bearer sk-env" || c.KeyError() != nil {
		t.Fatalf("Authorization %q, key error %v", h.Get("Authorization"), c.KeyError())
	}
	to := backends.Timeouts{Total: time.Second}
	c = backends.NewCore(backends.Config{URL: "http://y", Timeouts: to})
	if c.URL() != "http://y" || c.Timeouts() != to || c.Clock() != (backends.SystemClock{}) {
		t.Fatalf("URL %q, timeouts %+v, clock %T", c.URL(), c.Timeouts(), c.Clock())
	}
}

func TestDoNewRequestFails(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("bad body"), "other: bad body (explained)"},
		{&backends.Error{Class: backends.ErrHTTP4xx, Message: "prompt too long"}, "4xx: prompt too long (explained)"},
	} {
		clk := backendtest.NewClock()
		core, a := newReplayCore(backends.Config{}, &backendtest.Replay{Clock: clk}, clk)
		a.reqErr = c.err
		s := core.Do(context.Background(), a, backends.Request{ID: "r"})
		if s.Err == nil || s.Err.Error() != c.want || !s.Start.Equal(backendtest.Epoch) {
			t.Fatalf("error %v, start %v; want %q at the epoch", s.Err, s.Start, c.want)
		}
	}
}

// A non-2xx answer is classified with the server's words, which never carry the key;
// Explain sees it, except when the run itself was stopped.
func TestDoStatusErrorIsRedactedAndExplained(t *testing.T) {
	clk := backendtest.NewClock()
	rp := &backendtest.Replay{Clock: clk, Status: http.StatusNotFound, HeadersAt: 4 * ms, EndAt: 9 * ms,
		Segments: at(6*ms, line{Text: "key sk-secret-1 has no model m"})}
	cfg := backends.Config{APIKeyEnv: "K", Getenv: env{"K": "sk-secret-1"}.get}
	c, a := newReplayCore(cfg, rp, clk)
	s := c.Do(context.Background(), a, backends.Request{ID: "r"})
	if s.Err == nil || s.Err.Class != backends.ErrNotFound || s.Err.Status != 404 {
		t.Fatalf("error %+v, want 404", s.Err)
	}
	if strings.Contains(s.Err.Message, "sk-secret-1") || !strings.Contains(s.Err.Message, "key [redacted] has no model m") {
		t.Fatalf("message %q: the key must be redacted, the rest kept", s.Err.Message)
	}
	if s.Headers != 4*ms || s.End != 9*ms || len(a.explained) != 1 {
		t.Fatalf("headers %v, end %v, explained %d times; want 4ms, 9ms (the body read), once", s.Headers, s.End, len(a.explained))
	}
}

func TestDoCanceledRunIsNotExplained(t *testing.T) {
	clk := backendtest.NewClock()
	c, a := newReplayCore(backends.Config{}, &backendtest.Replay{Clock: clk}, clk)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by the user"))
	s := c.Do(ctx, a, backends.Request{ID: "r"})
	want := "canceled: the run was interrupted: interrupted by the user"
	if s.Err == nil || s.Err.Error() != want || len(a.explained) != 0 {
		t.Fatalf("error %v (explained %d times), want %q, not explained", s.Err, len(a.explained), want)
	}
}

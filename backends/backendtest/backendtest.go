// Package backendtest provides what the adapters' tests share: a clock moved by hand, a
// transport that replays a scripted stream while moving that clock (so arrival times are
// known exactly), an httptest handler that replays a recorded stream byte for byte, and
// the per-chunk benchmark both adapters report.
package backendtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// Epoch is where a Clock starts.
var Epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// Clock is a backends.Clock that only moves when told. Safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at Epoch.
func NewClock() *Clock { return &Clock{t: Epoch} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Segment is a piece of response body arriving At after the request starts.
type Segment struct {
	At   time.Duration
	Data []byte
}

// Replay is an http.RoundTripper answering every request with the same scripted
// response. When Clock is set, it moves the clock as the exchange proceeds: to HeadersAt
// (first byte and headers) when the response is returned, and to each Segment's At
// when the body read that delivers it happens, so the timing core's stamps are exactly
// the script's times. Requests' bodies are kept for assertions.
type Replay struct {
	Clock     *Clock
	Status    int // 0 means 200
	Header    http.Header
	HeadersAt time.Duration
	Segments  []Segment
	// EndAt is when the body reports EOF; 0 leaves the clock at the last segment.
	EndAt time.Duration

	mu     sync.Mutex
	bodies [][]byte
}

// RoundTrip implements http.RoundTripper.
func (r *Replay) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	var start time.Time
	if r.Clock != nil {
		start = r.Clock.Now()
	}
	trace := httptrace.ContextClientTrace(req.Context())
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Reused: true})
	}
	if r.Clock != nil {
		r.Clock.Set(start.Add(r.HeadersAt))
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	h := r.Header
	if h == nil {
		h = http.Header{"Content-Type": {"text/event-stream"}}
	}
	return &http.Response{
		Status:     http.StatusText(status),
		StatusCode: status,
		Header:     h,
		Body:       &replayBody{r: r, start: start},
		Request:    req,
		ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}

// Bodies returns the request bodies received so far.
func (r *Replay) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

type replayBody struct {
	r     *Replay
	start time.Time
	seg   int
	off   int
}

func (b *replayBody) Read(p []byte) (int, error) {
	segs := b.r.Segments
	if b.seg >= len(segs) {
		if b.r.Clock != nil && b.r.EndAt > 0 {
			b.r.Clock.Set(b.start.Add(b.r.EndAt))
		}
		return 0, io.EOF
	}
	s := segs[b.seg]
	if b.off == 0 && b.r.Clock != nil {
		b.r.Clock.Set(b.start.Add(s.At))
	}
	n := copy(p, s.Data[b.off:])
	b.off += n
	if b.off == len(s.Data) {
		b.seg++
		b.off = 0
	}
	return n, nil
}

func (b *replayBody) Close() error { return nil }

// Split cuts a recorded stream after every sep ("\n\n" for SSE events, "\n" for NDJSON
// lines), keeping sep with its part; a trailing remainder is its own part.
func Split(stream []byte, sep string) [][]byte {
	var parts [][]byte
	for len(stream) > 0 {
		i := bytes.Index(stream, []byte(sep))
		if i < 0 {
			parts = append(parts, stream)
			break
		}
		parts = append(parts, stream[:i+len(sep)])
		stream = stream[i+len(sep):]
	}
	return parts
}

// Timed gives part i the arrival time first + i*gap.
func Timed(parts [][]byte, first, gap time.Duration) []Segment {
	segs := make([]Segment, len(parts))
	for i, p := range parts {
		segs[i] = Segment{At: first + time.Duration(i)*gap, Data: p}
	}
	return segs
}

// Stream is an http.Handler that answers with status 200, contentType, and parts
// written and flushed one by one: a recorded stream replayed byte for byte. Requests'
// bodies are kept.
type Stream struct {
	ContentType string
	Parts       [][]byte
	// Hang, when set, is closed by the test to release a handler that waits after
	// writing HangAfter parts (to provoke idle/first-token timeouts); the handler also
	// returns when the client goes away.
	Hang      chan struct{}
	HangAfter int
	// Cut, when true, hijacks the connection and closes it after the parts, without the
	// chunked terminator: a stream cut mid-way.
	Cut bool

	mu     sync.Mutex
	bodies [][]byte
}

// ServeHTTP implements http.Handler.
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	w.Header().Set("Content-Type", s.ContentType)
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	for i, p := range s.Parts {
		if s.Hang != nil && i == s.HangAfter {
			select {
			case <-s.Hang:
			case <-r.Context().Done():
				return
			}
		}
		w.Write(p)
		f.Flush()
	}
	if s.Hang != nil && s.HangAfter >= len(s.Parts) {
		select {
		case <-s.Hang:
		case <-r.Context().Done():
		}
	}
	if s.Cut {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

// Bodies returns the request bodies received so far.
func (s *Stream) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// ReadStream reads a recorded stream from the calling package's testdata.
func ReadStream(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchChunkPath times be.Do on req (whose replayed stream carries chunks content
// chunks) and reports ns and allocations per chunk: the per-request costs are spread over
// the chunks. ok checks each sample so a broken stream cannot pass for a fast one.
func BenchChunkPath(b *testing.B, be backends.Backend, req backends.Request, chunks int, ok func(backends.Sample) bool) {
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s := be.Do(ctx, req); !ok(s) {
			b.Fatalf("sample: %v, %d chunks, %d tokens", s.Err, s.Chunks, s.OutputTokens)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	n := float64(b.N) * float64(chunks)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/chunk")
}

// AgentStep is an agent loop's later step as every adapter's request-body test sends
// it: the user's prompt, an assistant message of text with two calls (one under the
// server's id, one without, as Ollama's come), their results, then a call without
// text and its result; no prompt of its own. What each protocol makes of it is
// golden.
func AgentStep(model string) backends.Request {
	return backends.Request{Model: model, MaxTokens: 32, History: []backends.Message{
		{Role: backends.RoleUser, Content: "find it"},
		{Role: backends.RoleAssistant, Content: "looking", ToolCalls: []backends.ToolCall{
			{Index: 0, ID: "call_a", Name: "search", Args: `{"q":"it"}`, ArgsJSON: true},
			{Index: 1, Name: "search", Args: `{"q":"more"}`, ArgsJSON: true}}},
		{Role: backends.RoleTool, ToolCallID: "call_a", ToolName: "search", Content: "result a"},
		{Role: backends.RoleTool, ToolCallID: "call_1_1", ToolName: "search", Content: "result \"b\""},
		{Role: backends.RoleAssistant, ToolCalls: []backends.ToolCall{{Index: 0, ID: "call_c", Name: "open", Args: `not json`}}},
		{Role: backends.RoleTool, ToolCallID: "call_c", ToolName: "open", Content: "result c"},
	}}
}

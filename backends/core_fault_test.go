package backends_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/backendtest"
)

// Faults before and during a stream: what class and phase each gets. The phase timers
// run on the real clock (they must fire while the core waits on a read); the idle check
// compares offsets on the core's clock, so these tests move that clock by hand.

// stall answers with headers and lines at scripted offsets, then moves the clock to
// StallAt and blocks the body until the request is canceled.
type stall struct {
	clk     *backendtest.Clock
	lines   []backendtest.Segment
	stallAt time.Duration
}

func (s *stall) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ProtoMajor: 1,
		Body: &stallBody{s: s, ctx: r.Context(), start: s.clk.Now()}}, nil
}

type stallBody struct {
	s     *stall
	ctx   context.Context
	start time.Time
	next  int
}

func (b *stallBody) Read(p []byte) (int, error) {
	if b.next < len(b.s.lines) {
		seg := b.s.lines[b.next]
		b.next++
		b.s.clk.Set(b.start.Add(seg.At))
		return copy(p, seg.Data), nil
	}
	b.s.clk.Set(b.start.Add(b.s.stallAt))
	return 0, waitCanceled(b.ctx)
}

// waitCanceled blocks a stalled body until the core cancels the request, or fails the
// read once the test's own bound has passed (a core whose timers never fire).
func waitCanceled(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(3 * time.Second):
		return errors.New("stalled 3s: no timeout canceled the request")
	}
}

func (b *stallBody) Close() error { return nil }

func TestDoPhaseTimeouts(t *testing.T) {
	for _, c := range []struct {
		name    string
		t       backends.Timeouts
		lines   []backendtest.Segment
		stallAt time.Duration
		phase   string
		message string
	}{
		{"first token", backends.Timeouts{FirstToken: 20 * ms, Total: 5 * time.Second}, at(5*ms, line{}), 5 * ms, "first_token",
			"timeout: no generated token within 20ms of the request start (timeouts.first_token): the server may be loading the model or queueing requests"},
		// The first token stops the first-token timer: only the total limit is left.
		{"first token arrived", backends.Timeouts{FirstToken: 20 * ms, Total: 150 * ms}, at(5*ms, line{Text: "a"}), 5 * ms, "total",
			"timeout: the request took longer than 150ms (timeouts.total)"},
		// A gap of exactly the idle limit on the core's clock is a stall.
		{"idle", backends.Timeouts{Idle: 20 * ms, Total: 5 * time.Second}, at(5*ms, line{Text: "a"}), 25 * ms, "idle",
			"timeout: the stream stalled: no chunk for 20ms (timeouts.idle)"},
		// The idle gap counts from the last chunk, role-only ones included, not from the headers.
		{"idle from the last chunk", backends.Timeouts{Idle: 20 * ms, Total: 150 * ms}, at(5*ms, line{Text: "a"}, 15*ms, line{}), 34 * ms, "total",
			"timeout: the request took longer than 150ms (timeouts.total)"},
		// While the clock shows no gap, the idle timer keeps re-arming.
		{"not idle", backends.Timeouts{Idle: 20 * ms, Total: 150 * ms}, at(5*ms, line{Text: "a"}), 24 * ms, "total",
			"timeout: the request took longer than 150ms (timeouts.total)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := backendtest.NewClock()
			core, a := newReplayCore(backends.Config{Timeouts: c.t}, &stall{clk: clk, lines: c.lines, stallAt: c.stallAt}, clk)
			s := core.Do(context.Background(), a, backends.Request{ID: "r"})
			if s.Err == nil || s.Err.Class != backends.ErrTimeout || s.Err.Phase != c.phase || s.Err.Error() != c.message+" (explained)" {
				t.Fatalf("error %+v, want phase %s: %q", s.Err, c.phase, c.message)
			}
		})
	}
}

// Canceling the run mid-stream is ErrCanceled, with the measured chunks kept.
func TestDoCanceledMidStream(t *testing.T) {
	clk := backendtest.NewClock()
	core, a := newReplayCore(backends.Config{}, &stall{clk: clk, lines: at(5*ms, line{Text: "a"}), stallAt: 8 * ms}, clk)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for clk.Now().Sub(backendtest.Epoch) < 8*ms { // stalled
			time.Sleep(time.Millisecond)
		}
		cancel(errors.New("stopped"))
	}()
	s := core.Do(ctx, a, backends.Request{ID: "r"})
	if s.Err == nil || s.Err.Error() != "canceled: the run was interrupted: stopped" || s.Chunks != 1 {
		t.Fatalf("error %v, %d chunks; want canceled, 1 chunk kept", s.Err, s.Chunks)
	}
}

// failing answers every request with err, as a transport does before any response.
type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

func TestDoTransportErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		class backends.ErrorClass
		msg   string
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, backends.ErrRefused,
			"connection refused: is the server running at http://backend.test?"},
		{"dns", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "backend.test", Err: "no such host"}}, backends.ErrRefused,
			"cannot resolve host backend.test of http://backend.test: check the url"},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("network is unreachable")}, backends.ErrRefused,
			"cannot reach http://backend.test: network is unreachable"},
		{"closed", io.EOF, backends.ErrStreamCut, "the server at http://backend.test closed the connection before answering"},
		{"cut", io.ErrUnexpectedEOF, backends.ErrStreamCut, "the server at http://backend.test closed the connection before answering"},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, backends.ErrStreamCut,
			"the server at http://backend.test closed the connection before answering"},
		{"write failed", &net.OpError{Op: "write", Net: "tcp", Err: errors.New("broken pipe")}, backends.ErrOther,
			`Post "http://backend.test/gen": write tcp: broken pipe`},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := backendtest.NewClock()
			core, a := newReplayCore(backends.Config{}, failing{c.err}, clk)
			s := core.Do(context.Background(), a, backends.Request{ID: "r"})
			if s.Err == nil || s.Err.Class != c.class || s.Err.Message != c.msg+" (explained)" {
				t.Fatalf("error %v, want %s: %q", s.Err, c.class, c.msg)
			}
		})
	}
}

// A dial that never completes fails with the connect timeout, naming the URL.
func TestDoConnectTimeout(t *testing.T) {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return nil, waitCanceled(ctx)
	}}
	clk := backendtest.NewClock()
	core, a := newReplayCore(backends.Config{Timeouts: backends.Timeouts{Connect: 20 * ms}}, tr, clk)
	s := core.Do(context.Background(), a, backends.Request{ID: "r"})
	want := "timeout: no connection to http://backend.test within 20ms (timeouts.connect): is the host reachable? (explained)"
	if s.Err == nil || s.Err.Phase != "connect" || s.Err.Error() != want {
		t.Fatalf("error %v, want %q", s.Err, want)
	}
}

// linesHandler writes each line and flushes it, waiting hold after the first.
func linesHandler(hold time.Duration, lines ...line) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for i, l := range lines {
			if i == 1 {
				time.Sleep(hold)
			}
			w.Write(l.bytes())
			w.(http.Flusher).Flush()
		}
	}
}

// On a real connection: a new one is stamped Connect and Wrote (the send delay), a
// pooled one has no Connect; the connect timer stops once connected, so a stream
// longer than the connect limit completes; the stamps are the kernel's.
func TestDoRealConnection(t *testing.T) {
	srv := httptest.NewServer(linesHandler(60*ms, line{Text: "a"}, line{Done: true}))
	defer srv.Close()
	c := backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL, Timeouts: backends.Timeouts{Connect: 30 * ms}})
	a := &lineAdapter{core: c}
	for i := range 2 {
		s := c.Do(context.Background(), a, backends.Request{ID: "r"})
		if s.Err != nil {
			t.Fatalf("request %d: %v", i, s.Err)
		}
		if fresh := i == 0; (s.Connect > 0) != fresh {
			t.Errorf("request %d: connect %v; want a stamp only on the new connection", i, s.Connect)
		}
		if d, ok := s.SendDelay(); !ok || d <= 0 || s.Wrote <= s.Connect {
			t.Errorf("request %d: wrote %v, connect %v, send delay %v (%v)", i, s.Wrote, s.Connect, d, ok)
		}
		if !s.KernelStamps || s.FirstByte <= 0 || s.Headers < s.FirstByte || s.FirstToken < s.Headers || s.End < s.FirstToken {
			t.Errorf("request %d: kernel stamps %v, first byte %v, headers %v, first token %v, end %v: want kernel stamps, in order",
				i, s.KernelStamps, s.FirstByte, s.Headers, s.FirstToken, s.End)
		}
	}
	// A hand-moved clock is never mixed with the kernel's stamps.
	clk := backendtest.NewClock()
	c = backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL}, backends.WithClock(clk))
	if s := c.Do(context.Background(), &lineAdapter{core: c}, backends.Request{ID: "r"}); s.Err != nil || s.KernelStamps {
		t.Fatalf("test clock: error %v, kernel stamps %v; want none, false", s.Err, s.KernelStamps)
	}
}

// Chunks read from one packet share its kernel stamp, and headers that came in the
// same packet as the first chunk are stamped with it too, so neither appears later
// than the data that arrived with it.
func TestDoOnePacketOneStamp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		b := append(append(line{Text: "a"}.bytes(), line{Text: "b"}.bytes()...), line{Done: true}.bytes()...)
		w.Write(b) // headers and body in one write
	}))
	defer srv.Close()
	c := backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL})
	s := c.Do(context.Background(), &lineAdapter{core: c}, backends.Request{ID: "r"})
	if s.Err != nil || !s.KernelStamps {
		t.Fatalf("error %v, kernel stamps %v", s.Err, s.KernelStamps)
	}
	if len(s.ChunkArrivals) != 2 || s.ChunkArrivals[0] != s.ChunkArrivals[1] || s.FirstToken != s.Headers || s.FirstByte != s.Headers {
		t.Fatalf("first byte %v, headers %v, arrivals %v: want one stamp for all", s.FirstByte, s.Headers, s.ChunkArrivals)
	}
}

// TLS: the kernel stamps come from the connection under TLS on HTTP/1; HTTP/2
// multiplexes streams on one reader, so its chunks are stamped by the clock.
func TestDoKernelStampsOverTLS(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(linesHandler(0, line{Text: "a"}, line{Done: true}))
		srv.EnableHTTP2 = h2
		srv.StartTLS()
		tr := backends.NewTransport(backends.Timeouts{})
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		c := backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL}, backends.WithHTTPClient(&http.Client{Transport: tr}))
		s := c.Do(context.Background(), &lineAdapter{core: c}, backends.Request{ID: "r"})
		srv.Close()
		if s.Err != nil || s.KernelStamps == h2 || s.Chunks != 1 {
			t.Fatalf("HTTP/2 %v: error %v, kernel stamps %v, %d chunks", h2, s.Err, s.KernelStamps, s.Chunks)
		}
	}
}

// stepClock reads its base clock until stepped, then returns base's time plus each of
// steps in turn (the last one from then on): the stalled reader makes no readings, so
// these are the idle checks'.
type stepClock struct {
	*backendtest.Clock
	mu      sync.Mutex
	stepped bool
	steps   []time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stepped {
		return c.Clock.Now()
	}
	d := c.steps[0]
	if len(c.steps) > 1 {
		c.steps = c.steps[1:]
	}
	return backendtest.Epoch.Add(d)
}

// stepStall stalls like stall, then starts the clock's steps.
type stepStall struct{ clk *stepClock }

func (s stepStall) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ProtoMajor: 1,
		Body: &stepBody{clk: s.clk, ctx: r.Context()}}, nil
}

type stepBody struct {
	clk  *stepClock
	ctx  context.Context
	sent bool
}

func (b *stepBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, line{Text: "a"}.bytes()), nil
	}
	b.clk.mu.Lock()
	b.clk.stepped = true
	b.clk.mu.Unlock()
	return 0, waitCanceled(b.ctx)
}

func (b *stepBody) Close() error { return nil }

// A check that finds a gap short of the limit re-arms for the rest of it: the next
// check, 20ms later, finds the stream idle (180ms, then 240ms since the chunk, against
// 200ms), well before the total limit. Re-armed for longer, or not at all, it would not.
func TestDoIdleCheckRearmsForTheRest(t *testing.T) {
	clk := &stepClock{Clock: backendtest.NewClock(), steps: []time.Duration{180 * ms, 240 * ms}}
	core, a := newReplayCore(backends.Config{Timeouts: backends.Timeouts{Idle: 200 * ms, Total: 400 * ms}}, stepStall{clk}, clk)
	s := core.Do(context.Background(), a, backends.Request{ID: "r"})
	if s.Err == nil || s.Err.Phase != "idle" {
		t.Fatalf("error %v, want the idle timeout", s.Err)
	}
}

// Request.Wrote is called once a request has gone out: on a real connection when its
// bytes are written (the server, holding its answer until then, sees the call first),
// and once the round trip ends or fails otherwise: a refused connection, a missing key,
// a request that could not be built, a transport without write hooks.
func TestDoCallsWroteOnce(t *testing.T) {
	var calls atomic.Int32
	wrote := make(chan struct{}, 8)
	req := backends.Request{ID: "r", Wrote: func() { calls.Add(1); wrote <- struct{}{} }}
	check := func(name string, do func()) {
		t.Helper()
		calls.Store(0)
		do()
		if n := calls.Load(); n != 1 {
			t.Errorf("%s: Wrote called %d times, want once", name, n)
		}
		for len(wrote) > 0 {
			<-wrote
		}
	}
	sawWrote := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-wrote:
			sawWrote <- true
		case <-time.After(2 * time.Second): // Wrote waits for the answer: the test fails
			sawWrote <- false
		}
		linesHandler(0, line{Text: "a"}, line{Done: true})(w, r)
	}))
	defer srv.Close()
	c := backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL})
	check("real connection", func() {
		if s := c.Do(context.Background(), &lineAdapter{core: c}, req); s.Err != nil {
			t.Fatal(s.Err)
		}
		if !<-sawWrote {
			t.Error("the server answered before Wrote was called")
		}
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	c = backends.NewCore(backends.Config{Name: "line.t", URL: closed.URL})
	check("refused", func() { c.Do(context.Background(), &lineAdapter{core: c}, req) })
	clk := backendtest.NewClock()
	c, a := newReplayCore(backends.Config{APIKeyEnv: "LINE_KEY", Getenv: env{}.get}, &backendtest.Replay{Clock: clk}, clk)
	check("missing key", func() { c.Do(context.Background(), a, req) })
	c, a = newReplayCore(backends.Config{}, &backendtest.Replay{Clock: clk, Segments: at(ms, line{Done: true})}, clk)
	check("replayed", func() { c.Do(context.Background(), a, req) })
	a.reqErr = errors.New("bad body")
	check("not built", func() { c.Do(context.Background(), a, req) })
}

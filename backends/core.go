package backends

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planrun/planrun/internal/jsonscan"
)

// Core is the one timing core: it sends a request an Adapter built, stamps the response
// phases and every chunk's arrival with its Clock, enforces the phase timeouts and turns
// every failure into an *Error on the Sample. One Core serves one backend and is safe
// for concurrent use; its http.Client (and so its pool of keep-alive connections) is
// shared by all requests to that backend.
type Core struct {
	client   *http.Client
	clock    Clock
	timeouts Timeouts
	name     string
	url      string
	keyEnv   string
	key      string
	keyHdr   string            // Config.KeyHeader
	headers  map[string]string // the backend's extra headers, for side requests
}

// Option configures a Core.
type Option func(*Core)

// WithHTTPClient replaces the default client (NewTransport). Tests inject transports
// that replay streams or block dials.
func WithHTTPClient(c *http.Client) Option { return func(k *Core) { k.client = c } }

// WithClock replaces SystemClock. A deliberate seam: only tests and the load tools
// call it, to replay streams at exact instants.
func WithClock(c Clock) Option { return func(k *Core) { k.clock = c } }

// NewCore builds the core for one backend. The API key is read once, here, from the
// variable cfg.APIKeyEnv names; an unset variable is reported on every request as
// ErrMissingKey rather than failing construction, because errors are data.
func NewCore(cfg Config, opts ...Option) *Core {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Core{
		clock:    SystemClock{},
		timeouts: cfg.Timeouts,
		name:     cfg.Name,
		url:      cfg.URL,
		keyEnv:   cfg.APIKeyEnv,
		keyHdr:   cfg.KeyHeader,
		headers:  cfg.Headers,
	}
	if cfg.APIKeyEnv != "" {
		c.key = getenv(cfg.APIKeyEnv)
	}
	for _, o := range opts {
		o(c)
	}
	if c.client == nil {
		var source net.Addr
		if cfg.SourceAddr != "" {
			source = &net.TCPAddr{IP: net.ParseIP(cfg.SourceAddr)}
		}
		c.client = &http.Client{Transport: newTransport(cfg.Timeouts, source)}
	}
	return c
}

// Client is the shared HTTP client (for adapters' side requests such as model lists).
func (c *Core) Client() *http.Client { return c.client }

// Clock is the core's clock.
func (c *Core) Clock() Clock { return c.clock }

// Timeouts are the phase limits the core enforces.
func (c *Core) Timeouts() Timeouts { return c.timeouts }

// URL is the backend's base URL, as configured.
func (c *Core) URL() string { return c.url }

// KeyError is ErrMissingKey when the backend names a key variable that is unset.
func (c *Core) KeyError() *Error {
	if c.keyEnv == "" || c.key != "" {
		return nil
	}
	return &Error{Class: ErrMissingKey, Message: "environment variable " + c.keyEnv +
		" is not set: backend " + c.name + " reads its API key from it (api_key_env); export it before running"}
}

// Authorize adds the key's header when the backend has a key: Authorization: Bearer,
// or x-api-key where the backend sends it so (Config.KeyHeader).
func (c *Core) Authorize(h http.Header) {
	switch {
	case c.key == "":
	case c.keyHdr == KeyXAPIKey:
		h.Set("X-Api-Key", c.key)
	default:
		h.Set("Authorization", "Bearer "+c.key)
	}
}

// keyHeaderText is how a person reads the header the key goes in.
func (c *Core) keyHeaderText() string {
	if c.keyHdr == KeyXAPIKey {
		return "`x-api-key: <key>`"
	}
	return "`Authorization: Bearer <key>`"
}

// NewPost builds a streaming POST of a JSON body to url with the backend's extra headers
// and its key: what every adapter's NewRequest sends, apart from the Accept type.
func (c *Core) NewPost(ctx context.Context, url string, body []byte, accept string, headers map[string]string) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", accept)
	for k, v := range headers {
		hr.Header.Set(k, v)
	}
	c.Authorize(hr.Header)
	return hr, nil
}

// stamp is a request's start stamp: through req.Due when set (a paced request waits
// there for its time), else the clock's reading.
func (c *Core) stamp(req *Request) time.Time {
	if req.Due != nil {
		return req.Due(c.clock)
	}
	return c.clock.Now()
}

// wentOut tells a request that never reached the connection that it has gone out.
func wentOut(req *Request) {
	if req.Wrote != nil {
		req.Wrote()
	}
}

// bufSize is the read buffer per stream: large enough that one read usually takes every
// event the server has sent, small enough for thousands of concurrent streams.
const bufSize = 32 << 10

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, bufSize) }}

// Do sends req through a and measures it. It always returns a Sample; failures are on
// Sample.Err with their class.
func (c *Core) Do(ctx context.Context, a Adapter, req Request) (s Sample) {
	s.ID = req.ID
	defer c.finish(ctx, a, &req, &s)
	if e := c.KeyError(); e != nil {
		s.Start = c.stamp(&req)
		s.Err = e
		wentOut(&req)
		return s
	}

	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.timeouts.Total > 0 {
		var stop context.CancelFunc
		rctx, stop = context.WithTimeoutCause(rctx, c.timeouts.Total, &timeoutError{phase: "total", limit: c.timeouts.Total})
		defer stop()
	}
	w := &watch{clock: c.clock, cancel: cancel, t: c.timeouts, onWrote: req.Wrote}
	hreq, err := a.NewRequest(httptrace.WithClientTrace(rctx, w.trace()), req)
	if err != nil {
		s.Start = c.stamp(&req)
		s.Err = asError(err, ErrOther)
		wentOut(&req)
		return s
	}

	if req.Turn != nil && req.Due != nil {
		// Sent now, before its time: its connection holds its first write for its turn
		// (GotConn arms it), which takes the start stamp.
		w.turn, w.due = req.Turn, req.Due
		w.begin(c.clock.Now())
	} else {
		s.Start = c.stamp(&req) // built: a paced request waits for its time here
		w.begin(s.Start)
	}
	defer w.stop()
	resp, err := c.client.Do(hreq)
	if w.turn != nil {
		s.Start = w.started()
	}
	w.wentOut() // its bytes are written by now, or never will be
	s.Connect, s.Wrote = w.offset(w.connect.Load()), w.offset(w.wrote.Load())
	if err != nil {
		s.End = w.since()
		s.Err = c.transportError(ctx, rctx, err)
		return s
	}
	defer resp.Body.Close()
	s.Headers = w.since()
	s.FirstByte = w.offset(w.firstByte.Load())
	s.RequestID = resp.Header.Get("X-Request-Id")
	rx := c.kernelStamps(w, resp, &s)
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		s.End = w.since()
		s.Err = c.StatusError(resp, body)
		return s
	}
	w.headers(s.Headers)

	br := readers.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	defer func() {
		br.Reset(nil)
		readers.Put(br)
	}()
	capHint := 64
	if req.MaxTokens > 0 && req.MaxTokens < 1<<16 {
		capHint = req.MaxTokens + 1
	}
	s.ChunkArrivals = make([]time.Duration, 0, capHint)
	s.KernelStamps = rx != nil
	s.Unstreamed = req.NoStream
	dec := decoderFor(a, req, br)
	err = c.read(dec, &s, w, rx, req.KeepText)
	s.finishTools(req.Tools)
	s.ToolsOffered = len(req.Tools)
	if id, ok := dec.(ResponseIDer); ok {
		s.ResponseID = id.ResponseID()
	}
	if err != nil {
		s.Err = c.readError(ctx, rctx, err, &s)
		return s
	}
	// Read what follows the end marker (the chunked terminator) so the connection goes
	// back to the pool instead of being closed.
	io.CopyN(io.Discard, br, 64<<10)
	s.BodyEnd = bodyEnd(rx, &s, w.since())
	return s
}

// finish is Do's last step, after the body is closed and the read buffer pooled: the
// body's end, unless the kernel stamped the read that brought it, and a failure
// explained by the adapter and stripped of the key.
func (c *Core) finish(ctx context.Context, a Adapter, req *Request, s *Sample) {
	if !s.Start.IsZero() && s.BodyEnd == 0 {
		s.BodyEnd = max(c.clock.Now().Sub(s.Start), s.End)
	}
	if s.Err != nil {
		if ctx.Err() == nil {
			a.Explain(ctx, s.Err, *req)
		}
		s.Err.Message = redact(s.Err.Message, c.key)
	}
}

// kernelStamps is the connection's kernel receive stamps, or nil. Stamps are the kernel's
// receive times when the connection has them and only this request reads it (HTTP/1;
// HTTP/2 multiplexes streams on one reader) and the clock is the real one (tests' clocks
// stay exact). The headers then get the stamp of the read that completed them, so they
// never appear after a chunk that came in the same packet.
func (c *Core) kernelStamps(w *watch, resp *http.Response, s *Sample) rxTimer {
	var rx rxTimer
	if _, real := c.clock.(SystemClock); real && resp.ProtoMajor == 1 {
		w.mu.Lock()
		rx = w.rx
		w.mu.Unlock()
	}
	if rx != nil {
		if t, ok := rx.RxTime(); ok {
			if d := t.Sub(s.Start); d > 0 && d < s.Headers {
				s.Headers = d
				s.FirstByte = min(s.FirstByte, d)
			}
		}
	}
	return rx
}

// bodyEnd is when the response's body ended, read at now: the kernel's stamp of the
// read that brought its end, when there is one between the last chunk and now (the
// goroutine's own delay in getting there is then the client's, not the request's).
func bodyEnd(rx rxTimer, s *Sample, now time.Duration) time.Duration {
	if rx != nil {
		if t, ok := rx.RxTime(); ok {
			if d := t.Sub(s.Start); d >= s.End && d <= now {
				return d
			}
		}
	}
	return max(now, s.End)
}

// decoderFor is the adapter's stream decoder, or its whole-response decoder for a
// non-streamed request where it has one.
func decoderFor(a Adapter, req Request, br *bufio.Reader) Decoder {
	if wd, ok := a.(WholeDecoder); ok && req.NoStream {
		return wd.NewWholeDecoder(br)
	}
	return a.NewDecoder(br)
}

// read streams the response into s, keeping the answer's content text when keep is set:
// its raw bytes are gathered chunk by chunk and unescaped once, at the end.
func (c *Core) read(dec Decoder, s *Sample, w *watch, rx rxTimer, keep bool) error {
	if !keep {
		return c.stream(dec, s, w, rx, nil)
	}
	var text []byte
	err := c.stream(dec, s, w, rx, &text)
	s.Text = jsonscan.Unquote(text)
	return err
}

// stream is the per-chunk path: decode, read the clock, record. It takes no lock and
// allocates nothing beyond growing ChunkArrivals (and text, when the request keeps its
// content: non-nil text gets each chunk's raw content appended).
func (c *Core) stream(dec Decoder, s *Sample, w *watch, rx rxTimer, text *[]byte) error {
	var ch Chunk
	complete := false
	prev := s.Headers
	for {
		ch = Chunk{}
		err := dec.Next(&ch)
		at := c.clock.Now().Sub(s.Start)
		if rx != nil && err == nil {
			// The kernel's stamp of the read that completed this chunk: never before the
			// previous chunk nor after now, else (a wall-clock step) the clock's reading.
			if t, ok := rx.RxTime(); ok {
				if d := t.Sub(s.Start); d >= prev && d <= at {
					at = d
				}
			}
			prev = at
		}
		if err != nil {
			if len(s.ChunkArrivals) == 0 {
				s.End = at
			}
			if err == io.EOF && complete {
				s.endTools(at)
			}
			c.fallbackTokens(s)
			if err == io.EOF && complete {
				return nil
			}
			return err
		}
		w.last.Store(int64(at))
		tool := toolOutput(ch.Tools)
		if ch.Text > 0 || ch.Reasoning > 0 || tool {
			if len(s.ChunkArrivals) == 0 {
				s.FirstToken = at
				w.firstToken()
			}
			s.ChunkArrivals = append(s.ChunkArrivals, at)
			s.End = at
			if (ch.Text > 0 || tool) && s.Chunks+s.ToolChunks == 0 {
				s.FirstAnswer = at
			}
			if tool {
				s.ToolChunks++
			}
			if ch.Text > 0 {
				s.Chunks++
				s.TextBytes += ch.Text
				if text != nil {
					*text = append(*text, ch.Content...)
				}
			}
			if ch.Reasoning > 0 {
				s.ReasoningChunks++
				s.ReasoningBytes += ch.Reasoning
			}
		}
		for i := range ch.Tools {
			s.toolPart(&ch.Tools[i], at)
		}
		if ch.FinishReason != "" {
			s.FinishReason = ch.FinishReason
			s.endTools(at)
			complete = true
		}
		if ch.Tokens != "" {
			s.TokenSource = ch.Tokens
			s.OutputTokens = ch.OutputTokens
			s.PromptTokens = ch.PromptTokens
			s.CachedTokens = ch.CachedTokens
			s.ReasoningTokens = ch.ReasoningTokens
			s.ReasoningTokenSource = ""
			if ch.ReasoningTokens > 0 {
				s.ReasoningTokenSource = ch.Tokens
			}
			complete = true
		}
		if ch.Server != nil {
			s.Server = ch.Server
		}
		s.Inputs += ch.Inputs
		if ch.LogProbs != nil || ch.PromptLogProbs != nil {
			s.LogProbs = append(s.LogProbs, ch.LogProbs...)
			s.PromptLogProbs = append(s.PromptLogProbs, ch.PromptLogProbs...)
		}
		if ch.Done {
			if len(s.ChunkArrivals) == 0 {
				s.End = at
			}
			s.endTools(at)
			c.fallbackTokens(s)
			return nil
		}
	}
}

// fallbackTokens counts generated chunks as tokens when the server gave no count, and
// says so in TokenSource; likewise reasoning chunks when the server counted the output
// but not its reasoning part (Ollama's eval_count, vLLM's usage without details).
func (c *Core) fallbackTokens(s *Sample) {
	if s.TokenSource == "" {
		s.TokenSource = TokensChunks
		s.OutputTokens = len(s.ChunkArrivals)
	}
	if s.ReasoningTokenSource == "" && s.ReasoningChunks > 0 {
		s.ReasoningTokenSource = TokensChunks
		s.ReasoningTokens = min(s.ReasoningChunks, s.OutputTokens)
	}
}

// watch enforces the phase timeouts with timers on the real clock and records the
// httptrace phases. The per-chunk path only stores an atomic offset (last); the idle
// timer compares against it when it fires instead of being reset on every chunk.
type watch struct {
	clock  Clock
	cancel context.CancelCauseFunc
	t      Timeouts

	// base is when the watch began (begin); the hooks record their times as offsets
	// from it, and start is the start stamp's (Sample.Start's): zero unless the
	// request's turn set it later (setStart).
	base  time.Time
	start atomic.Int64

	mu                                  sync.Mutex // guards the timers and rx against the hooks
	connectTimer, firstTimer, idleTimer *time.Timer
	connect, wrote, firstByte           atomic.Int64 // from base
	last                                atomic.Int64 // from the start stamp
	sawFirstToken                       bool
	rx                                  rxTimer // the connection's kernel receive times, if any
	// onWrote is the request's Wrote, called once (wentOut): when its bytes are written,
	// or when the round trip ends without that.
	onWrote func()
	went    atomic.Bool

	// turn and due are a paced request's Turn and Due when its connection holds its
	// first write (Request.Turn); state is how far it is through its turn (turnFree…).
	// pend is the held write on pendOn, and sent, sentErr what writing it did.
	turn    Turn
	due     func(Clock) time.Time
	state   atomic.Int32
	pend    []byte
	pendOn  *turnConn
	sent    int
	sentErr error
}

func (w *watch) wentOut() {
	if w.onWrote != nil && w.went.CompareAndSwap(false, true) {
		w.onWrote()
	}
}

// fromBase is the time now as an offset from base.
func (w *watch) fromBase() int64 { return int64(w.clock.Now().Sub(w.base)) }

// since is the time since the start stamp.
func (w *watch) since() time.Duration {
	return w.clock.Now().Sub(w.base) - time.Duration(w.start.Load())
}

// offset is a hook's time (from base; 0: not recorded) from the start stamp: 0 when not
// recorded or not after the stamp (a connection a paced request found ready before its
// time delayed nothing of it).
func (w *watch) offset(fromBase int64) time.Duration {
	if fromBase == 0 {
		return 0
	}
	return max(time.Duration(fromBase-w.start.Load()), 0)
}

func (w *watch) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused {
				w.connect.Store(w.fromBase())
			}
			w.mu.Lock()
			w.rx = rxSource(info.Conn)
			if w.connectTimer != nil {
				w.connectTimer.Stop()
			}
			w.mu.Unlock()
			if w.turn != nil {
				w.arm(info.Conn)
			}
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			raiseTo(&w.wrote, w.fromBase())
			// A first write held for its turn says it went out itself (SendAt): net/http
			// calls this before it flushes its buffer to the connection.
			if st := w.state.Load(); st != turnArmed && st != turnSending {
				w.wentOut()
			}
		},
		GotFirstResponseByte: func() { w.firstByte.Store(w.fromBase()) },
	}
}

// arm has c hold the request's first write for its turn, or, where it cannot (HTTP/2),
// waits for the turn here, before the request is written.
func (w *watch) arm(c net.Conn) {
	if tc := holdable(c); tc != nil {
		if w.state.CompareAndSwap(turnFree, turnArmed) || w.state.Load() == turnArmed {
			tc.armed.Store(w)
		}
		return
	}
	w.takeTurn(turnFree)
}

// takeTurn waits for the request's turn in Request.Due, if its turn is still in state
// from (and so no held write will take it), and sets the start stamp.
func (w *watch) takeTurn(from int32) bool {
	if !w.state.CompareAndSwap(from, turnSending) {
		return false
	}
	w.setStart(w.due(w.clock))
	w.state.Store(turnTaken)
	return true
}

func (w *watch) setStart(t time.Time) { w.start.Store(int64(t.Sub(w.base))) }

// sendFirst is the request's first write on c, p, held for its turn: the pacer makes
// what of it the socket takes at once (SendAt), and this goroutine the rest.
func (w *watch) sendFirst(c *turnConn, p []byte) (int, error) {
	w.pend, w.pendOn = p, c
	w.turn.Send(w.clock, w)
	n, err := w.sent, w.sentErr
	w.pend, w.pendOn, w.sentErr = nil, nil, nil
	if err == nil && n < len(p) {
		var m int
		m, err = c.Conn.Write(p[n:])
		n += m
	}
	return n, err
}

// SendAt implements Sender: the held write, with start the request's start stamp.
func (w *watch) SendAt(start time.Time) {
	w.setStart(start)
	w.sent, w.sentErr = w.pendOn.writeNow(w.pend)
	raiseTo(&w.wrote, w.fromBase())
	w.state.Store(turnTaken)
	w.wentOut()
}

// started is the start stamp of a request with a Turn, once its round trip has ended:
// taken by its held write or in GotConn, else (it never got to write: no connection,
// or the round trip failed first) taken now in Request.Due. A held write still waiting
// for its turn is waited for. A connection it was armed on and never wrote to keeps
// the arm until its next write, which finds the turn taken and goes as it comes.
func (w *watch) started() time.Time {
	if !w.takeTurn(turnFree) && !w.takeTurn(turnArmed) {
		for w.state.Load() != turnTaken {
			time.Sleep(turnPoll)
		}
	}
	return w.base.Add(time.Duration(w.start.Load()))
}

// raiseTo sets n to at least v.
func raiseTo(n *atomic.Int64, v int64) {
	for m := n.Load(); m < v && !n.CompareAndSwap(m, v); m = n.Load() {
	}
}

// begin starts the phase timers at t, the watch's base.
func (w *watch) begin(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.base = t
	if d := w.t.Connect; d > 0 {
		w.connectTimer = time.AfterFunc(d, func() { w.cancel(&timeoutError{phase: "connect", limit: d}) })
	}
	if d := w.t.FirstToken; d > 0 {
		w.firstTimer = time.AfterFunc(d, func() { w.cancel(&timeoutError{phase: "first_token", limit: d}) })
	}
}

// headers starts the idle watch once the response has begun.
func (w *watch) headers(at time.Duration) {
	if w.t.Idle <= 0 {
		return
	}
	w.last.Store(int64(at))
	w.mu.Lock()
	w.idleTimer = time.AfterFunc(w.t.Idle, w.checkIdle)
	w.mu.Unlock()
}

func (w *watch) checkIdle() {
	gap := w.since() - time.Duration(w.last.Load())
	if gap >= w.t.Idle {
		w.cancel(&timeoutError{phase: "idle", limit: w.t.Idle})
		return
	}
	w.mu.Lock()
	if w.idleTimer != nil {
		w.idleTimer.Reset(w.t.Idle - gap)
	}
	w.mu.Unlock()
}

func (w *watch) firstToken() {
	if w.firstTimer != nil {
		w.firstTimer.Stop()
	}
}

func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range []*time.Timer{w.connectTimer, w.firstTimer, w.idleTimer} {
		if t != nil {
			t.Stop()
		}
	}
	w.idleTimer = nil
}

// timeoutError is the cancel cause a phase timer leaves on the request's context.
type timeoutError struct {
	phase string
	limit time.Duration
}

func (e *timeoutError) Error() string { return e.phase + " timeout after " + e.limit.String() }

// asError keeps an *Error as it is and wraps anything else with class.
func asError(err error, class ErrorClass) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Class: class, Message: err.Error()}
}

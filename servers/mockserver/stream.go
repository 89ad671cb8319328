package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// params are what one generation request asks for, decoded by its protocol.
type params struct {
	model        string
	promptTokens int
	promptHead   string // the start of the (first) prompt text, kept on the Truth
	promptText   string // the whole prompt, kept only for Config.PrefixCache
	maxTokens    int    // 0: not set
	stream       bool
	includeUsage bool // OpenAI stream_options.include_usage
	ignoreEOS    bool // vLLM extension
	minTokens    int  // vLLM extension
	messages     int  // chat messages in the request (0 for a bare prompt)
	tools        toolRequest
	// toolResults counts the tools' results the conversation carries since its last
	// user prompt (tool role messages, tool_result blocks): Config.ToolCalls answers in
	// text once it has enough.
	toolResults int
}

// encoder renders one protocol. Streaming methods append to b so one pooled buffer per
// stream serves every chunk.
type encoder interface {
	contentType(stream bool) string
	// earlyHeaders: send the response headers on admission, before the first token
	// (vLLM does; Ollama's headers go out with the first chunk).
	earlyHeaders() bool
	// begin precedes the first content chunk (vLLM's role-only chunk).
	begin(b []byte, g *generation) []byte
	chunk(b []byte, g *generation, from, to int, last bool, now time.Time) []byte
	end(b []byte, g *generation, now time.Time) []byte
	// malformed is a chunk a client cannot decode.
	malformed(b []byte, g *generation) []byte
	// whole is the non-streaming response.
	whole(b []byte, g *generation, now time.Time) []byte
	// reasons says whether the endpoint carries reasoning apart from content (chat, and
	// Ollama's generate); Config.ReasoningTokens applies only there.
	reasons() bool
	writeError(w http.ResponseWriter, status int, msg, typ string)
}

// generation is one request in flight.
type generation struct {
	id     string
	n      uint64
	p      params
	tokens int
	// reasoning is how many of the first tokens are reasoning (Config.ReasoningTokens,
	// capped at tokens; 0 where the endpoint carries none).
	reasoning int
	finish    string
	fault     Fault

	received, admitted time.Time
	// arrived is when the request's first bytes reached the socket (the kernel's stamp
	// when kernel, else received).
	arrived     time.Time
	kernel      bool
	first, last time.Time // first and last content chunk written
	created     int64     // unix seconds, for OpenAI's "created"
	quotedID    []byte    // JSON strings, rendered once per request
	quotedModel []byte

	// tool is the call the answer is, nil for a text answer (Config.choose).
	tool *toolCall

	prefill time.Duration // added to the first token's due time (Config.PrefillPerToken)
	cached  int           // prompt tokens the prefix cache held (Config.PrefixCache)
}

// length decides the output length and finish reason: the request's cap (or
// OutputTokens) against the scripted EOS, which ignore_eos disables and min_tokens delays.
func (c Config) length(p params) (int, string) {
	limit := p.maxTokens
	if limit <= 0 {
		limit = c.OutputTokens
	}
	natural := c.EOSAt
	if p.ignoreEOS {
		natural = 0
	}
	if natural > 0 && p.minTokens > natural {
		natural = p.minTokens
	}
	if natural > 0 && natural <= limit {
		return natural, "stop"
	}
	return limit, "length"
}

// tokenGap is the scripted time before token i of request n for model: TTFT for the
// first, TPOT after that (the phase's where Phases has begun, the model's own where
// ModelTimings has it), each moved by seeded jitter.
func (c Config) tokenGap(model string, n uint64, i int) time.Duration {
	ttft, tpot := c.TTFT, c.TPOT
	var from uint64
	for _, p := range c.Phases {
		if n >= p.From && p.From >= from {
			ttft, tpot, from = p.TTFT, p.TPOT, p.From
		}
	}
	if t, ok := c.ModelTimings[model]; ok {
		ttft, tpot = t.TTFT, t.TPOT
	}
	d := tpot
	if i == 0 {
		d = ttft
	}
	if c.Jitter > 0 {
		u := unitFloat(mix(c.Seed, n, uint64(i)+1))
		d += time.Duration((2*u - 1) * float64(c.Jitter))
	}
	return max(d, 0)
}

// Schedule is when each token of request number n is due, as offsets from admission, for
// a model without ModelTimings: a pure function of the config, so a test can predict the
// server exactly.
func (c Config) Schedule(n uint64, tokens int) []time.Duration {
	out := make([]time.Duration, tokens)
	var at time.Duration
	for i := range out {
		at += c.tokenGap("", n, i)
		out[i] = at
	}
	return out
}

// chunkCount is the number of content chunks for tokens tokens, k per chunk after the
// first (which carries one, as vLLM's stream interval does).
func chunkCount(tokens, k int) int {
	if tokens <= 1 {
		return 1
	}
	return 1 + (tokens-1+k-1)/k
}

// chunkBounds is the token range [from, to) of chunk c.
func chunkBounds(c, k, tokens int) (from, to int) {
	if c == 0 {
		return 0, 1
	}
	from = 1 + (c-1)*k
	return from, min(from+k, tokens)
}

// vocab are the output tokens: words with a leading space, JSON-safe as they stand, so
// a whitespace count of the text equals the token count.
var vocab = [...]string{" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy",
	" dog", " while", " mock", " tokens", " stream", " at", " steady", " pace"}

// split cuts the token range [from, to) at the end of g's reasoning: the reasoning part
// and the answer part, either possibly empty.
func (g *generation) split(from, to int) (rFrom, rTo, aFrom, aTo int) {
	cut := min(max(g.reasoning, from), to)
	return from, cut, cut, to
}

func appendTokens(b []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		b = append(b, vocab[i%len(vocab)]...)
	}
	return b
}

// promptText is how a request carries text: a plain string (Ollama), or OpenAI's
// string-or-parts JSON.
type promptText interface{ string | json.RawMessage }

// request is the part of a generation request both protocols share.
type request[T promptText] struct {
	toolRequest
	Model    string       `json:"model"`
	Messages []message[T] `json:"messages"`
	Prompt   T            `json:"prompt"`
}

// message is a chat message: its content, and its role (a tool's result is "tool").
type message[T promptText] struct {
	Content T      `json:"content"`
	Role    string `json:"role"`
}

// texts reads one protocol's texts of type T: a text's words (the mock's tokens), its
// head, and the whole text.
type texts[T promptText] struct {
	words   func(T) int
	head    func(T) string
	text    func(T) string
	results func(T) int // tools' results inside a content (the Messages API's blocks)
}

var (
	plainTexts   = texts[string]{countWords, head, plainText, func(string) int { return 0 }}
	contentTexts = texts[json.RawMessage]{countContentWords, contentHead, contentText, countToolResults}
)

// decode reads a generation request's body into body, the protocol's request that
// embeds q, and gives the params both protocols share; with whole, the prompt's whole
// text too (for the prefix cache).
func (q *request[T]) decode(r *http.Request, body any, chat, whole bool, tx texts[T]) (params, error) {
	if err := json.NewDecoder(r.Body).Decode(body); err != nil {
		return params{}, err
	}
	p, err := q.params(chat, tx)
	if whole {
		p.promptText = q.text(chat, tx.text)
	}
	return p, err
}

// params gives the model and the prompt's word count and head: from a chat's messages, or
// else from the prompt.
func (q *request[T]) params(chat bool, tx texts[T]) (params, error) {
	p := params{model: q.Model, tools: q.toolRequest}
	if q.Model == "" {
		return p, errors.New("model is required")
	}
	if !chat {
		p.promptTokens, p.promptHead = tx.words(q.Prompt), tx.head(q.Prompt)
		return p, nil
	}
	p.messages = len(q.Messages)
	for i, m := range q.Messages {
		p.promptTokens += tx.words(m.Content)
		// A user's prompt starts a new task: the results before it were another's.
		switch r := tx.results(m.Content); {
		case m.Role == "tool":
			p.toolResults++
		case r > 0:
			p.toolResults += r
		case m.Role == "user":
			p.toolResults = 0
		}
		if i == 0 {
			p.promptHead = tx.head(m.Content)
		}
	}
	return p, nil
}

// countWords is the mock tokenizer: whitespace-separated words.
func countWords(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		sp := s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

// promptHeadLen is how much of a prompt a Truth keeps: enough for a client to put a
// unique marker first (planrun's prompts start with a 16-hex-digit prefix).
const promptHeadLen = 40

func head(s string) string {
	if len(s) > promptHeadLen {
		s = s[:promptHeadLen]
	}
	return strings.Clone(s)
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// generate serves one generation request with encoder enc. decode reads the body; auth
// says whether the API key applies (it does on /v1/*, as with vLLM's --api-key).
func (s *Server) generate(w http.ResponseWriter, r *http.Request, enc encoder, auth bool,
	decode func(*http.Request) (params, error)) {
	g := s.newGeneration(w, r)
	var t *Truth
	if s.cfg.RecordTruth {
		t = &Truth{ID: g.id, Number: g.n, Path: r.URL.Path, Received: g.received, Arrived: g.arrived, ArrivedKernel: g.kernel}
		defer s.record(t)
	}
	if no := s.screen(w, r, g, t, auth, decode); no.status != 0 {
		if t != nil {
			t.Status = no.status
		}
		enc.writeError(w, no.status, no.msg, no.typ)
		return
	}

	g.tokens, g.finish = s.cfg.length(g.p)
	s.shape(g, enc, t)
	g.created = g.received.Unix()
	g.quotedID, g.quotedModel = quote(g.id), quote(g.p.model)
	s.promptTok.Add(int64(g.p.promptTokens))
	g.prefill = s.prefill(g, t)
	flusher := openResponse(w, enc, g.p.stream)
	if t != nil {
		t.Status = http.StatusOK
	}

	release, ok := s.admit(r.Context())
	if !ok {
		if t != nil {
			t.Canceled = true
		}
		return
	}
	defer release()
	g.admitted = s.cfg.clock.Now()
	if t != nil {
		t.Admitted, t.OutputTokens, t.FinishReason = g.admitted, g.tokens, g.finish
	}

	if !s.writeChunks(r.Context(), w, flusher, enc, g, t) {
		if t != nil {
			t.Canceled = true
		}
		return
	}
	if t != nil {
		t.Complete = true
	}
}

// shape decides what the generation answers beside its tokens: a tool call (a streamed
// request offering tools, to an API that calls them) or reasoning tokens first.
func (s *Server) shape(g *generation, enc encoder, t *Truth) {
	if callsTools(enc) && g.p.stream {
		g.tool = s.cfg.choose(g.p.tools, g.n, g.p.toolResults)
	}
	switch {
	case g.tool != nil:
		g.finish = "tool_calls"
		if t != nil {
			t.ToolCall = g.tool.name
		}
	case enc.reasons():
		g.reasoning = min(s.cfg.ReasoningTokens, g.tokens)
	}
}

// newGeneration numbers a request and names it: the client's X-Request-Id, else req-N,
// echoed on the response.
func (s *Server) newGeneration(w http.ResponseWriter, r *http.Request) *generation {
	g := &generation{received: s.cfg.clock.Now(), n: s.requests.Add(1)}
	g.arrived = g.received
	if _, ok := s.cfg.clock.(realClock); ok {
		g.arrived, g.kernel = arrived(r, g.received)
	}
	g.id = r.Header.Get("X-Request-Id")
	if g.id == "" {
		g.id = fmt.Sprintf("req-%d", g.n)
	}
	w.Header().Set("X-Request-Id", g.id)
	return g
}

// refusal is an error answer: HTTP status, message and OpenAI error type. A zero status
// lets the request through.
type refusal struct {
	status   int
	msg, typ string
}

// screen checks the API key, decodes the body into g.p and picks g's fault (the scripted
// one, or X-Mock-Fault's), then says whether the request is refused before admission.
func (s *Server) screen(w http.ResponseWriter, r *http.Request, g *generation, t *Truth, auth bool,
	decode func(*http.Request) (params, error)) refusal {
	if auth && s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey &&
		r.Header.Get("X-Api-Key") != s.cfg.APIKey { // the Messages API's header

		return refusal{http.StatusUnauthorized, "Unauthorized", ""}
	}
	p, err := decode(r)
	if err != nil {
		return refusal{http.StatusBadRequest, err.Error(), "BadRequestError"}
	}
	g.p = p
	g.fault = s.cfg.Faults.FaultFor(s.cfg.Seed, g.n)
	if h := r.Header.Get("X-Mock-Fault"); h != "" {
		if f, err := ParseFault(h); err == nil {
			g.fault = f // a test forces a fault on this request
		}
	}
	if t != nil {
		t.Model, t.Stream, t.Fault, t.PromptTokens = p.model, p.stream, g.fault, p.promptTokens
		t.Prompt, t.Messages = p.promptHead, p.messages
	}
	return s.faultRefusal(w.Header(), g)
}

// faultRefusal is the error answer for an unknown model or a fault that replaces the
// whole response; the retryable ones set Retry-After on h.
func (s *Server) faultRefusal(h http.Header, g *generation) refusal {
	switch {
	case !s.modelKnown(g.p.model) || g.fault == FaultNotFound:
		return refusal{http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist. Available models: %s",
			g.p.model, strings.Join(s.modelNames(), ", ")), "NotFoundError"}
	case g.fault == FaultForbidden:
		return refusal{http.StatusForbidden, "mock: this key may not use this model", "PermissionDeniedError"}
	case g.fault == FaultRateLimited:
		h.Set("Retry-After", s.cfg.Faults.RetryAfter)
		return refusal{http.StatusTooManyRequests, "mock: rate limit reached", "RateLimitError"}
	case g.fault == FaultInternal:
		return refusal{http.StatusInternalServerError, "mock: internal error", "InternalServerError"}
	case g.fault == FaultUnavailable:
		h.Set("Retry-After", s.cfg.Faults.RetryAfter)
		return refusal{http.StatusServiceUnavailable, "mock: server overloaded", "ServiceUnavailableError"}
	}
	return refusal{}
}

// openResponse sets the content type, and for a stream whose protocol does so sends the
// headers now, before admission. It returns w's flusher, nil if w cannot flush.
func openResponse(w http.ResponseWriter, enc encoder, stream bool) http.Flusher {
	w.Header().Set("Content-Type", enc.contentType(stream))
	flusher, _ := w.(http.Flusher)
	if stream && enc.earlyHeaders() {
		w.WriteHeader(http.StatusOK)
		if flusher != nil {
			flusher.Flush()
		}
	}
	return flusher
}

// chunking is how g's answer is cut: chunks chunks of k tokens (one write holding every
// token when not streaming), and the chunk a mid-stream fault strikes before (-1: none).
func (s *Server) chunking(g *generation) (chunks, k, faultAt int) {
	k = s.cfg.TokensPerChunk
	chunks = chunkCount(g.tokens, k)
	if !g.p.stream {
		chunks, k = 1, g.tokens // the whole answer is one write
	}
	faultAt = -1
	if g.fault.midStream() {
		faultAt = min(s.cfg.Faults.AfterChunks, chunks-1)
	}
	return chunks, k, faultAt
}

// writeChunks writes g's answer after admission: each chunk when its last token is due,
// then the stream's end. It returns false if the client went away first.
func (s *Server) writeChunks(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, enc encoder,
	g *generation, t *Truth) bool {
	clk := s.cfg.clock
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	wt := clk.newWaiter()
	defer wt.stop()

	stream := g.p.stream
	chunks, k, faultAt := s.chunking(g)
	if t != nil {
		t.Chunks = make([]ChunkTruth, 0, chunks) // sized once: no allocation per chunk
	}
	var offset time.Duration // due time of the next token, from admission
	var firstDue time.Time   // when token 0 was due: a non-streaming answer's first token
	tok := 0
	buf := *bp
	for c := 0; c < chunks; c++ {
		from, to := chunkBounds(c, k, g.tokens)
		if !stream {
			from, to = 0, g.tokens
		}
		for ; tok < to; tok++ {
			offset += s.cfg.tokenGap(g.p.model, g.n, tok)
			if tok == 0 {
				offset += g.prefill
				firstDue = g.admitted.Add(offset)
			}
		}
		due := g.admitted.Add(offset)

		if c == faultAt {
			var ok bool
			if buf, ok = s.strikeMidStream(ctx, wt, w, flusher, enc, g, buf); !ok {
				return false
			}
		}
		if !wt.waitUntil(ctx, due) {
			return false
		}
		now := clk.Now()
		buf = encodeChunk(enc, buf[:0], g, c, chunks, from, to, now, firstDue)
		w.Write(buf)
		if flusher != nil {
			flusher.Flush()
		}
		written := clk.Now()
		if c == 0 {
			g.first = written
		}
		g.last = written
		if t != nil {
			t.Chunks = append(t.Chunks, ChunkTruth{Tokens: to - from, Reasoning: max(min(to, g.reasoning)-from, 0),
				Due: due, Writing: now, Written: written})
		}
	}
	s.outTok.Add(int64(g.tokens))
	if stream {
		var ok bool
		if buf, ok = s.endStream(ctx, wt, w, flusher, enc, g, buf); !ok {
			return false
		}
	}
	if t != nil {
		t.Ended = clk.Now()
	}
	*bp = buf // keep a grown buffer for the next stream
	return true
}

// encodeChunk appends chunk c of chunks (tokens from..to) as written now to buf: the
// stream's beginning before the first, or the whole answer when not streaming (whose
// first token was due at firstDue).
func encodeChunk(enc encoder, buf []byte, g *generation, c, chunks, from, to int, now, firstDue time.Time) []byte {
	if !g.p.stream {
		g.first, g.last = firstDue, now // Ollama's eval_duration still spans the decode
		return enc.whole(buf, g, now)
	}
	if c == 0 {
		buf = enc.begin(buf, g)
	}
	return enc.chunk(buf, g, from, to, c == chunks-1, now)
}

// endStream writes a stream's end after its last chunk (and the configured EndDelay).
// It returns buf, reused, and false if the client went away during the delay.
func (s *Server) endStream(ctx context.Context, wt waiter, w http.ResponseWriter, flusher http.Flusher,
	enc encoder, g *generation, buf []byte) ([]byte, bool) {
	clk := s.cfg.clock
	if d := s.cfg.EndDelay; d > 0 && !wt.waitUntil(ctx, clk.Now().Add(d)) {
		return buf, false
	}
	buf = enc.end(buf[:0], g, clk.Now())
	w.Write(buf)
	if flusher != nil {
		flusher.Flush()
	}
	return buf, true
}

// strikeMidStream acts out g's mid-stream fault, once, before its chunk is due. It returns
// buf (reused for a malformed chunk) and false if the client went away during a stall.
func (s *Server) strikeMidStream(ctx context.Context, wt waiter, w http.ResponseWriter, flusher http.Flusher,
	enc encoder, g *generation, buf []byte) ([]byte, bool) {
	switch g.fault {
	case FaultStreamCut:
		// Abort the connection with no terminating chunk: the client reads an
		// unexpected EOF, as when a server dies mid-stream.
		panic(http.ErrAbortHandler)
	case FaultStall:
		if !wt.waitUntil(ctx, s.cfg.clock.Now().Add(s.cfg.Faults.StallFor)) {
			return buf, false
		}
	case FaultMalformed:
		buf = enc.malformed(buf[:0], g)
		w.Write(buf)
		if flusher != nil {
			flusher.Flush()
		}
	}
	return buf, true
}

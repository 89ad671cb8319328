package stats

import (
	"cmp"
	"math"

	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// Window is the measured wall-clock window of a run: first request start to last
// request end. Throughput and requests/s divide by its length.
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Seconds is the window's length in seconds.
func (w Window) Seconds() float64 { return w.End.Sub(w.Start).Seconds() }

// IsZero reports whether the window was left unset.
func (w Window) IsZero() bool { return w.Start.IsZero() && w.End.IsZero() }

// extend widens w to cover start..end.
func (w *Window) extend(start, end time.Time) {
	if w.Start.IsZero() || start.Before(w.Start) {
		w.Start = start
	}
	if end.After(w.End) {
		w.End = end
	}
}

// Target is what the workload asked for; an Accumulator holds the samples against it.
type Target struct {
	// PromptTokens is the requested input length (0: not stated).
	PromptTokens int
	// MaxTokens is the requested output length; a successful request that produced fewer
	// tokens is an early stop (0: not stated, no early stops counted).
	MaxTokens int
	// SLO is the per-request objective behind attainment and goodput (zero: none).
	SLO SLO
	// Turns is the number of turns of a session workload's sessions (0: no sessions).
	Turns int
	// Concurrency is a closed loop's slots, which Delivered.InFlightHeld is held
	// against (0: not a closed loop, no held span).
	Concurrency int
	// Confidence is the confidence of the figures' intervals, a fraction (0:
	// DefaultConfidence).
	Confidence float64
}

// confidence is t's Confidence, or the default.
func (t Target) confidence() float64 {
	if t.Confidence > 0 {
		return t.Confidence
	}
	return DefaultConfidence
}

// Summary describes the requests of one concurrency level (one run, or all runs
// pooled). Times are in seconds, rates in per-second units. Distributions cover
// successful requests only; failures are counted by class.
type Summary struct {
	Requests  int `json:"requests"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// Failures counts failed requests by error class.
	Failures map[backends.ErrorClass]int `json:"failures,omitempty"`

	// WindowSeconds is the measured window the rates divide by.
	WindowSeconds float64 `json:"window_s"`

	TTFT Dist `json:"ttft_s"`
	// TPOT is (E2E − TTFT)/(output tokens − 1) per request (requests with > 1 token).
	TPOT Dist `json:"tpot_s"`
	// ITL pools the gaps between consecutive content chunks of every request.
	ITL Dist `json:"itl_s"`
	// ITLRelativeError is 0 when ITL's percentiles are exact, else the bound on their
	// relative error (the package's ITLRelativeError: more gaps than ITLExactGaps).
	ITLRelativeError float64 `json:"itl_relative_error,omitempty"`
	// RelativeError is 0 when the per-request figures' percentiles (TTFT, TPOT, E2E,
	// decode rate, connection set-up, send delay) are exact, else the bound on their
	// relative error: a run of more than ITLExactGaps requests (a long trace replay or
	// soak) keeps them in the same bounded sketch as ITL.
	RelativeError float64 `json:"relative_error,omitempty"`

	E2E Dist `json:"e2e_s"`
	// DecodeRate is the per-request decode rate, tokens/s after the first token.
	DecodeRate Dist `json:"decode_tok_s"`

	// OutputTokens is Σ output tokens of successful requests.
	OutputTokens int `json:"output_tokens"`
	// OutputTokS is OutputTokens / WindowSeconds.
	OutputTokS float64 `json:"output_tok_s"`
	// RequestsPerSec is successful requests / WindowSeconds.
	RequestsPerSec float64 `json:"requests_s"`

	// TokenSource is "usage", "server" or "chunks" when every successful request counted
	// its tokens the same way, "mixed" when they differ, "" when none succeeded.
	TokenSource string `json:"token_source"`
	// TokensPerChunk is Σ output tokens / Σ content chunks; above 1 the server coalesces
	// several tokens into one chunk (so ITL is not per-token latency).
	TokensPerChunk float64 `json:"tokens_per_chunk"`

	// PromptTokensRequested is Target.PromptTokens, or the mean length the requests
	// asked when they had their own (Sample.PromptTokensAsked: a trace, a dataset); PromptTokensActual is the mean of
	// the server-counted prompt tokens (NaN when the server counted none).
	PromptTokensRequested int     `json:"prompt_tokens_requested"`
	PromptTokensActual    float64 `json:"prompt_tokens_actual"`
	// EarlyStops counts successful requests that produced fewer than Target.MaxTokens.
	EarlyStops int `json:"early_stops"`

	// GoodRequests counts the requests that met every limit of Target.SLO (a failed
	// request never does), and GoodOutputTokens their output tokens.
	GoodRequests     int `json:"good_requests"`
	GoodOutputTokens int `json:"good_output_tokens"`
	// SLOAttainment is GoodRequests / Requests, a fraction; GoodputReqS and GoodputTokS
	// divide GoodRequests and GoodOutputTokens by the window. All three are NaN when
	// the target has no SLO.
	SLOAttainment float64 `json:"slo_attainment"`
	// SLOAttainmentCI is SLOAttainment's Clopper–Pearson interval, at Confidence.
	SLOAttainmentCI Interval `json:"slo_attainment_ci"`
	// Confidence is the confidence of the intervals (each Dist's CI), a fraction.
	Confidence  float64 `json:"confidence"`
	GoodputReqS float64 `json:"goodput_requests_s"`
	GoodputTokS float64 `json:"goodput_tok_s"`
	// NewConnections counts requests (failed ones too) that opened a connection instead
	// of reusing a pooled one; ConnectSetup is their set-up time (dial, TLS), which is
	// inside their TTFT: cold connections of a first run show up here.
	NewConnections int  `json:"new_connections"`
	ConnectSetup   Dist `json:"connect_setup_s"`
	// SendDelay is the client's own time to send each request written (Sample.SendDelay):
	// from its start stamp to fully written, less connection set-up. It is inside TTFT
	// and grows when the client is busy (many streams on few cores).
	SendDelay Dist `json:"send_delay_s"`
	// Turns and Sessions are a session workload's figures per turn index and per
	// session (Accumulator.AddTurn); absent otherwise, and in Runs.Median.
	Turns    []TurnSummary   `json:"turns,omitempty"`
	Sessions *SessionSummary `json:"sessions,omitempty"`
	// AgentLoop is a session workload's agent loops' figures, per task and per step
	// (executor.AgentSpec); absent otherwise, and in Runs.Median.
	AgentLoop *AgentLoopSummary `json:"agent_loop,omitempty"`
	// SharedPrefixTokens is Σ prompt tokens that were a prefix an earlier request of the
	// run already sent (AddSharedPrefix), and SharedPrefixPct its share of the server's
	// prompt token counts, in % (NaN when the server counted none).
	SharedPrefixTokens int     `json:"shared_prefix_tokens"`
	SharedPrefixPct    float64 `json:"shared_prefix_pct"`
	// SendLag is, in open loop and trace replay, how late each request was sent against
	// its schedule (AddSendLag); a full cap on requests in flight shows here. Its
	// percentiles are exact up to ITLExactGaps requests, then within ITLRelativeError.
	SendLag Dist `json:"send_lag_s"`
	// Reasoning models: TTFO is the time to the first answer token (reasoning
	// excluded; TTFT is the first token of any kind), ReasoningSpan the time from the
	// first token to the first answer token (requests that reasoned and then answered),
	// and AnswerTPOT TPOT over the answer tokens alone. ReasoningTokens and AnswerTokens
	// split OutputTokens; ReasoningTokenSource is "usage" when the server counted the
	// reasoning tokens, "chunks" when reasoning chunks were counted, "mixed", or "" when
	// no request reasoned.
	TTFO                 Dist   `json:"ttfo_s"`
	ReasoningSpan        Dist   `json:"reasoning_span_s"`
	AnswerTPOT           Dist   `json:"tpot_answer_s"`
	ReasoningTokens      int    `json:"reasoning_tokens"`
	AnswerTokens         int    `json:"answer_tokens"`
	ReasoningTokenSource string `json:"reasoning_token_source,omitempty"`
	// Embeddings requests: Inputs is Σ embeddings the successful requests returned,
	// InputTokens Σ the server's input token counts of those requests; InputsPerSec and
	// InputTokS divide them by the window (0 when no request embedded anything).
	Inputs       int     `json:"inputs,omitempty"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	InputsPerSec float64 `json:"inputs_s,omitempty"`
	InputTokS    float64 `json:"input_tok_s,omitempty"`
	// Delivered is the load the requests put on the server: in flight over time, and the
	// paced requests' rate against their schedule's.
	Delivered Delivered `json:"delivered"`
	// Agentic are the tool calls' figures and the prefix cache's share of the prompts.
	Agentic
}

// accumulate is an Accumulator fed the samples.
func accumulate(samples []backends.Sample, t Target) *Accumulator {
	a := NewAccumulator(t)
	for i := range samples {
		a.addSample(&samples[i])
	}
	return a
}

// Accumulator gathers the figures of one run's requests as they finish, so the samples
// themselves (with every chunk arrival) need not be kept: per request it keeps the few
// scalars the exact TTFT, TPOT, E2E and decode-rate percentiles need, and its
// inter-chunk gaps (ITL) exactly up to ITLExactGaps, then in a sketch. Add is cheap;
// Summary derives the distributions. Not safe for concurrent use: feed it from one
// goroutine.
type Accumulator struct {
	t                     Target
	l                     Summary
	ttft, tpot, e2e, rate valueStore
	connect, send         valueStore
	itl                   valueStore
	itlRequests           int // requests with at least one gap in itl
	chunks                int
	promptSum, promptN    int
	askedSum, askedN      int // the prompt lengths asked of requests that had their own
	sources               map[backends.TokenSource]bool
	window                Window          // spanned by the samples added
	sessions              *sessionStore   // nil until AddTurn
	agentLoop             *agentLoopStore // nil until an agent loop's step
	lag                   valueStore
	ttfo, span, tpotAns   valueStore
	reasoningSources      map[backends.TokenSource]bool
	load                  loadStore
	agentic               agenticStore
}

// perRequest are the stores of the figures taken once per request.
func (a *Accumulator) perRequest() []*valueStore {
	return []*valueStore{&a.ttft, &a.tpot, &a.e2e, &a.rate, &a.connect, &a.send, &a.ttfo, &a.span, &a.tpotAns}
}

// NewAccumulator returns an empty Accumulator holding samples against t.
func NewAccumulator(t Target) *Accumulator {
	return &Accumulator{t: t, load: loadStore{concurrency: t.Concurrency, ramp: math.NaN()}}
}

// Add counts one finished request, the whole record: its sample, and as the record says,
// its session turn, its shared prefix and its schedule. ev is not retained.
func (a *Accumulator) Add(ev executor.Event) {
	a.addSample(ev.Sample)
	switch {
	case ev.Step > 1 && a.sessions != nil:
		a.sessions.stepOfTurn(ev.Session, ev.Sample)
	case ev.Turn > 0:
		a.addTurn(ev.Session, ev.Turn, ev.Sample)
	}
	if ev.Step > 0 {
		a.addStep(ev)
	}
	a.addSharedPrefix(ev.Sample, ev.SharedPrefixTokens)
	if ev.Paced {
		a.addSendLag(ev.SendLag)
		a.addPaced(ev.Scheduled, ev.Sample)
	}
}

// addSample counts one finished request's sample; s is not retained.
func (a *Accumulator) addSample(s *backends.Sample) {
	a.window.extend(s.Start, s.Start.Add(s.End))
	var tok tokenSpan
	if s.OK() {
		tok = tokenSpan{tokens: s.OutputTokens, good: !a.t.SLO.IsZero() && a.t.SLO.Meets(s)}
		if _, ok := s.TTFT(); ok {
			tok.first, tok.last = s.Start.Add(s.FirstToken), s.Start.Add(s.End)
		}
	}
	a.load.add(s.Start, s.Start.Add(max(s.BodyEnd, s.End)), s.Slot, tok)
	a.l.Requests++
	a.addSLO(s)
	if s.Connect > 0 {
		a.connect.add(s.Connect.Seconds())
	}
	if d, ok := s.SendDelay(); ok {
		a.send.add(d.Seconds())
	}
	if !s.OK() {
		a.l.Failed++
		if a.l.Failures == nil {
			a.l.Failures = map[backends.ErrorClass]int{}
		}
		a.l.Failures[s.Err.Class]++
		return
	}
	a.l.Succeeded++
	if d, ok := s.TTFT(); ok {
		a.ttft.add(d.Seconds())
	}
	if d, ok := s.TPOT(); ok {
		a.tpot.add(d.Seconds())
	}
	if r, ok := s.DecodeRate(); ok {
		a.rate.add(r)
	}
	for i := 1; i < len(s.ChunkArrivals); i++ {
		a.itl.add((s.ChunkArrivals[i] - s.ChunkArrivals[i-1]).Seconds())
	}
	if len(s.ChunkArrivals) > 1 {
		a.itlRequests++
	}
	a.e2e.add(s.E2E().Seconds())
	a.addReasoning(s)
	a.addAgentic(s)
	a.l.Inputs += s.Inputs
	a.l.OutputTokens += s.OutputTokens
	a.chunks += s.Chunks
	if counted(s) {
		a.promptSum += s.PromptTokens
		a.promptN++
	}
	if s.PromptTokensAsked > 0 {
		a.askedSum += s.PromptTokensAsked
		a.askedN++
	}
	if s.OutputTokens < cmp.Or(s.MaxTokens, a.t.MaxTokens) { // no max_tokens: 0, which no count is under
		a.l.EarlyStops++
	}
	if s.TokenSource != "" {
		if a.sources == nil {
			a.sources = map[backends.TokenSource]bool{}
		}
		a.sources[s.TokenSource] = true
	}
}

// addReasoning adds a successful request's answer and reasoning figures.
func (a *Accumulator) addReasoning(s *backends.Sample) {
	if d, ok := s.TTFO(); ok {
		a.ttfo.add(d.Seconds())
	}
	if d, ok := s.ReasoningSpan(); ok {
		a.span.add(d.Seconds())
	}
	if d, ok := s.AnswerTPOT(); ok {
		a.tpotAns.add(d.Seconds())
	}
	a.l.ReasoningTokens += s.ReasoningTokens
	a.l.AnswerTokens += s.AnswerTokens()
	if s.ReasoningTokenSource != "" {
		if a.reasoningSources == nil {
			a.reasoningSources = map[backends.TokenSource]bool{}
		}
		a.reasoningSources[s.ReasoningTokenSource] = true
	}
}

// counted says whether s's prompt tokens count: the server counted them on a success.
func counted(s *backends.Sample) bool { return s.OK() && s.PromptTokens > 0 }

// addSharedPrefix counts tokens of s's prompt as a shared prefix (executor.Event's
// SharedPrefixTokens), on the same requests as the prompt tokens they are a share of.
func (a *Accumulator) addSharedPrefix(s *backends.Sample, tokens int) {
	if counted(s) {
		a.l.SharedPrefixTokens += tokens
	}
}

// addSendLag counts how late one paced request was sent against its schedule. A
// replay's lags go into a bounded store, so a long trace does not grow the memory.
func (a *Accumulator) addSendLag(d time.Duration) { a.lag.add(d.Seconds()) }

// addPaced counts s as a paced request due at offset at of its run (executor.Event's
// Scheduled), for the rate its run was sent at against its schedule's.
func (a *Accumulator) addPaced(at time.Duration, s *backends.Sample) { a.load.addPaced(at, s.Start) }

// Window is first request start to last request end (Start+End) over the requests
// added. Failed requests count too: they occupied the window.
func (a *Accumulator) Window() Window { return a.window }

// merge adds o's requests to a (pooling runs); o is left as it was.
func (a *Accumulator) merge(o *Accumulator) {
	if !o.window.IsZero() {
		a.window.extend(o.window.Start, o.window.End)
	}
	a.l.Requests += o.l.Requests
	a.l.Succeeded += o.l.Succeeded
	a.l.Failed += o.l.Failed
	for c, n := range o.l.Failures {
		if a.l.Failures == nil {
			a.l.Failures = map[backends.ErrorClass]int{}
		}
		a.l.Failures[c] += n
	}
	a.l.OutputTokens += o.l.OutputTokens
	a.l.EarlyStops += o.l.EarlyStops
	a.l.GoodRequests += o.l.GoodRequests
	a.l.GoodOutputTokens += o.l.GoodOutputTokens
	a.l.SharedPrefixTokens += o.l.SharedPrefixTokens
	a.l.ReasoningTokens += o.l.ReasoningTokens
	a.l.Inputs += o.l.Inputs
	a.l.AnswerTokens += o.l.AnswerTokens
	for _, v := range []struct{ dst, src *valueStore }{{&a.ttft, &o.ttft}, {&a.tpot, &o.tpot}, {&a.e2e, &o.e2e},
		{&a.rate, &o.rate}, {&a.connect, &o.connect}, {&a.send, &o.send}, {&a.itl, &o.itl},
		{&a.ttfo, &o.ttfo}, {&a.span, &o.span}, {&a.tpotAns, &o.tpotAns}} {
		v.dst.merge(v.src)
	}
	if o.sessions != nil {
		if a.sessions == nil {
			a.sessions = &sessionStore{}
		}
		a.sessions.merge(o.sessions, a.t.Turns)
	}
	if o.agentLoop != nil {
		if a.agentLoop == nil {
			a.agentLoop = &agentLoopStore{}
		}
		a.agentLoop.merge(o.agentLoop)
	}
	a.lag.merge(&o.lag)
	a.load.merge(&o.load)
	a.mergeAgentic(o)
	a.chunks += o.chunks
	a.itlRequests += o.itlRequests
	a.promptSum += o.promptSum
	a.promptN += o.promptN
	a.askedSum += o.askedSum
	a.askedN += o.askedN
	for s := range o.sources {
		if a.sources == nil {
			a.sources = map[backends.TokenSource]bool{}
		}
		a.sources[s] = true
	}
	for s := range o.reasoningSources {
		if a.reasoningSources == nil {
			a.reasoningSources = map[backends.TokenSource]bool{}
		}
		a.reasoningSources[s] = true
	}
}

// Summary summarises the requests added over the window w (zero: the window they span).
// The distributions cover successful requests only.
func (a *Accumulator) Summary(w Window) Summary {
	if w.IsZero() {
		w = a.window
	}
	return a.level(w.Seconds())
}

func (a *Accumulator) level(windowSeconds float64) Summary {
	l := a.l
	l.WindowSeconds = windowSeconds
	l.TTFT = a.ttft.dist()
	l.TPOT = a.tpot.dist()
	l.ITL = a.itl.dist()
	if a.itl.sketch != nil {
		l.ITLRelativeError = ITLRelativeError
	}
	for _, v := range a.perRequest() {
		if v.sketch != nil {
			l.RelativeError = ITLRelativeError
		}
	}
	l.E2E = a.e2e.dist()
	l.DecodeRate = a.rate.dist()
	l.NewConnections = a.connect.count()
	l.ConnectSetup = a.connect.dist()
	l.SendDelay = a.send.dist()
	l.SendLag = a.lag.dist()
	l.Delivered = a.load.delivered()
	l.OutputTokS = ratio(float64(l.OutputTokens), windowSeconds)
	l.RequestsPerSec = ratio(float64(l.Succeeded), windowSeconds)
	l.TokensPerChunk = ratio(float64(l.OutputTokens), float64(a.chunks))
	a.setSLO(&l, windowSeconds)
	if a.t.SLO.IsZero() {
		l.Delivered.SteadyGoodputTokS = math.NaN()
	}
	if a.sessions != nil {
		l.Turns, l.Sessions = a.sessions.summaries(a.t.Turns)
	}
	if a.agentLoop != nil {
		l.AgentLoop = a.agentLoop.summary()
	}
	l.PromptTokensRequested = a.t.PromptTokens
	if a.askedN > 0 { // requests with their own lengths (a trace, a dataset): what they asked
		l.PromptTokensRequested = int(math.Round(float64(a.askedSum) / float64(a.askedN)))
	}
	l.PromptTokensActual = ratio(float64(a.promptSum), float64(a.promptN))
	l.SharedPrefixPct = ratio(float64(l.SharedPrefixTokens)*100, float64(a.promptSum))
	l.TokenSource = sourceOf(a.sources)
	l.TTFO, l.ReasoningSpan, l.AnswerTPOT = a.ttfo.dist(), a.span.dist(), a.tpotAns.dist()
	l.ReasoningTokenSource = sourceOf(a.reasoningSources)
	a.setIntervals(&l)
	a.agenticSummary(&l, l.Confidence)
	if l.Inputs > 0 {
		l.InputTokens = a.promptSum
		l.InputsPerSec = ratio(float64(l.Inputs), windowSeconds)
		l.InputTokS = ratio(float64(a.promptSum), windowSeconds)
	}
	return l
}

// setIntervals puts each distribution's intervals at the target's confidence: over its
// requests, and for ITL over the requests behind its gaps.
func (a *Accumulator) setIntervals(l *Summary) {
	conf := a.t.confidence()
	for _, d := range []struct {
		dist  *Dist
		store *valueStore
	}{{&l.TTFT, &a.ttft}, {&l.TPOT, &a.tpot}, {&l.E2E, &a.e2e}, {&l.DecodeRate, &a.rate},
		{&l.ConnectSetup, &a.connect}, {&l.SendDelay, &a.send}, {&l.SendLag, &a.lag},
		{&l.TTFO, &a.ttfo}, {&l.ReasoningSpan, &a.span}, {&l.AnswerTPOT, &a.tpotAns}} {
		d.dist.CI = d.store.ci(conf, d.store.count())
	}
	l.ITL.CI = a.itl.ci(conf, a.itlRequests)
	l.Confidence = conf
	l.SLOAttainmentCI = Unbounded(1)
	if !a.t.SLO.IsZero() {
		l.SLOAttainmentCI = ProportionInterval(l.GoodRequests, l.Requests, conf)
	}
}

// sourceOf names the one token source of a set, "mixed" for several, "" for none.
func sourceOf(sources map[backends.TokenSource]bool) string {
	switch len(sources) {
	case 0:
		return ""
	case 1:
		for s := range sources {
			return string(s)
		}
	}
	return "mixed"
}

// ratio is n/d, NaN when d is not positive (a figure that could not be measured).
func ratio(n, d float64) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return n / d
}

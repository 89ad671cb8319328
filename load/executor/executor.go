// Package executor generates load against one backend: for a cell's concurrency level it
// runs the warm-up runs (discarded) and the measured runs, closed loop (a fixed number of
// requests in flight) or open loop (requests sent on a Poisson or constant schedule).
// Measuring is the timing core's job (package backends); the executor only decides when
// each request is sent and collects the Samples, which carry their own errors.
package executor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
)

// LevelSpec describes one concurrency level of one cell: what to send and how. It
// travels to load agents as JSON (package agent); its Prompts, Shapes and Trace travel
// apart.
type LevelSpec struct {
	// Concurrency is the number of requests kept in flight (closed loop), or the cap on
	// requests in flight (open loop).
	Concurrency int
	// Requests is the number of requests in each run.
	Requests int
	// WarmupRuns are run first and discarded; RepeatRuns are measured.
	WarmupRuns, RepeatRuns int
	// RequestRate > 0 switches to open loop: requests per second on the Arrival schedule.
	RequestRate float64
	// Models, when set, spread the requests over several model names by weight (seeded
	// by Seed and the request's number: the same sequence every run); the sample records
	// the name it went to.
	Models []WeightedModel
	// Inputs > 0 makes every request an embeddings request of Inputs texts of
	// InputTokens tokens each (Prompts' fit), each behind its own marker.
	Inputs, InputTokens int
	// Arrival is "poisson" (default) or "constant".
	Arrival string
	// Seed makes the open loop's Poisson schedule repeatable: run i draws from Seed +
	// 7919·i (warm-up runs apart). Prompt markers come from Prompts.Salt and request ids.
	Seed uint64
	// Request is the template for every request; Prompts supplies its text.
	Request backends.Request
	Prompts *Prompts `json:"-"`
	// Shapes, when set, give request n of every run its own prompt and output length
	// (Shapes[n % len]); otherwise every request is the template.
	Shapes []Shape `json:"-"`
	// Session, when set, runs the level as multi-turn sessions (closed loop, Concurrency
	// sessions in flight); Requests is then Sessions × Turns.
	Session *SessionSpec
	// Trace, when set, replays a trace: each run sends the rows it streams, each at its
	// own offset, with its own shape (Shapes and RequestRate are then unused).
	// Concurrency caps the requests in flight; 0 means no cap.
	Trace Trace `json:"-"`
	// Ramp, when above 0, spreads a closed loop's start over that long: slot k of n sends
	// its first request k·Ramp/n into the run, so the slots neither start in one burst
	// nor, on a server that keeps time from each arrival, burst again every round. The
	// requests a slot starts before the ramp is over are the ramp's: sent and reported
	// (Event.Ramp) but kept out of Samples and the run's window; the Requests measured
	// follow them. Sessions, open loop and replay do not ramp.
	Ramp time.Duration
	// MaxRequests, with Options.Enough, is the most requests a measured run sends while
	// it waits for Enough; warm-up runs send Requests. 0: Requests.
	MaxRequests int
	// WarmConnections, when above 0, opens that many connections to the server before
	// each run (where the backend can, backends.ConnectionWarmer), so requests sent at
	// set times do not pay a connection set-up: a replay's most rows due close together.
	WarmConnections int
	// Share is the part of the level this process sends when several load agents share
	// it (see Share); the zero Share sends the whole level.
	Share Share
}

// RunResult is one measured (or warm-up) run of a level.
type RunResult struct {
	Index  int  // 0-based among runs of its kind
	Warmup bool // warm-up runs are discarded from statistics
	// Start and End bound the measured window: first request start to last request end.
	Start, End time.Time
	// Samples holds every request's Sample, unless Options.DropSamples.
	Samples []backends.Sample
	// Interrupted is set when the run was cut short by cancellation.
	Interrupted bool
	// Err is why a replay's trace stopped before its end (it could not be read).
	Err error
}

// Window is the measured wall time of the run.
func (r *RunResult) Window() time.Duration { return r.End.Sub(r.Start) }

// Result is everything measured at one level.
type Result struct {
	Level       LevelSpec
	Runs        []RunResult // measured runs only
	Interrupted bool
}

// Event is the record of one finished request, warm-up included, reported as it
// finishes: the one value that the request log (ledger.RequestRecord embeds it), the
// statistics (stats.Accumulator.Add) and progress all take. A new per-request fact is a
// field here; a tagged one reaches requests.jsonl by itself.
type Event struct {
	Run    int  `json:"run"`
	Warmup bool `json:"warmup"`
	// Ramp is set on a request of a ramped closed loop's ramp (LevelSpec.Ramp): sent
	// while the slots were still starting, it is not measured.
	Ramp bool `json:"ramp,omitempty"`
	// Sample is valid only during the call: copy what you keep.
	*backends.Sample
	// Session and Turn place a session workload's request: its session within the run
	// and its turn within the session, both from 1; 0 when the level has no sessions.
	Session int `json:"session,omitempty"`
	Turn    int `json:"turn,omitempty"`
	// NewPromptTokens is, for a session's turn, the prompt tokens it added to its
	// conversation as the server counted them: its prompt tokens less the last turn's
	// prompt and answer (turn 1: all of them). It holds the turn's own new prompt and the
	// chat template's tokens around the two new messages. 0 when the server counted none.
	NewPromptTokens int `json:"new_prompt_tokens,omitempty"`
	// Step is the request's step in its turn's agent loop, from 1 (SessionSpec.Agent); 0
	// outside one. ToolWait is the time the turn spent in tools just before this step
	// (between the last step's answer and this request): client time, never the
	// server's. StepLimit is set on a turn's last step when its answer still called a tool
	// and the turn had no steps left.
	Step      int           `json:"step,omitempty"`
	ToolWait  time.Duration `json:"tool_wait_ns,omitempty"`
	StepLimit bool          `json:"step_limit,omitempty"`
	// SharedPrefixTokens are the request's prompt tokens of a prefix group or hash
	// blocks that an earlier request of its run already sent (Sent.Add).
	SharedPrefixTokens int `json:"shared_prefix_tokens,omitempty"`
	// Agent is the load agent that sent the request, from 0, when several shared its
	// level (a workload's agents, LevelSpec.Share); nil when one process sent it all.
	Agent *int `json:"agent,omitempty"`
	// Paced is set in open loop and replay: the request had a scheduled send time.
	// The request log writes Scheduled and SendLag as scheduled_ns and send_lag_ns,
	// present exactly when Paced (ledger.RequestRecord).
	Paced bool `json:"-"`
	// Scheduled is when the request was due, from the run's start; SendLag is how late
	// it was sent against that (a full cap on requests in flight shows here). Both are
	// zero unless Paced.
	Scheduled time.Duration `json:"-"`
	SendLag   time.Duration `json:"-"`
	// Index is the request's number in its run, from 0.
	Index int `json:"-"`
}

// Options tune a level's execution.
type Options struct {
	// OnRequest is called for every finished request, in the order they finish, from one
	// goroutine per run that drains a buffered queue: never concurrently, and never on a
	// request's own goroutine, so slow side work (a disk, statistics) cannot delay a
	// request's timing. Every call for a run returns before its OnRun.
	OnRequest func(Event)
	// DropSamples leaves Run.Samples empty, so memory does not grow with the number of
	// requests: for callers that take what they need in OnRequest.
	DropSamples bool
	// OnRun is called after each run (warm-up included), in order.
	OnRun func(RunResult)
	// Grace bounds how long in-flight requests may finish after ctx is canceled; after
	// it they are canceled. Zero cancels them at once.
	Grace time.Duration
	// Stop, when closed, cancels in-flight requests at once (a second Ctrl-C).
	Stop <-chan struct{}
	// Enough, when set, is asked at the start of each measured run for a channel that
	// closes once the run has measured enough (a precision block): the run then sends no
	// more requests, lets those in flight finish, and ends, not interrupted. Until then
	// it sends up to LevelSpec.MaxRequests, keeping its concurrency or its rate.
	Enough func(run int) <-chan struct{}
	// Abort, when non-nil and closed, fails every request not yet sent with the error
	// it returns (a plan-managed server died mid-cell).
	Abort <-chan struct{}
	// AbortErr is the error recorded on requests refused because of Abort.
	AbortErr *backends.Error
	// Clock is the executor's only source of time (the open-loop schedule and its send
	// lags, the start of a refused request); nil means the timing core's SystemClock.
	Clock backends.Clock
	// StartAt, when set, is the instant on Clock at which a run's schedule starts: a
	// closed loop's slots (and their ramp) and sessions wait for it, and a paced run's
	// offsets count from it. Load agents that share a level start each run at one
	// instant so; zero starts a run at once.
	StartAt time.Time
}

// RunLevel runs the warm-up and measured runs of one level against b. Cancelling ctx
// stops sending new requests; requests in flight get opts.Grace to finish. The result
// holds what was measured so far either way. The process runs with LevelProcs processors
// meanwhile.
func RunLevel(ctx context.Context, b backends.Backend, lv LevelSpec, opts Options) Result {
	defer raiseProcs()()
	res := Result{Level: lv}
	if opts.Clock == nil {
		opts.Clock = backends.SystemClock{}
	}
	total := lv.WarmupRuns + lv.RepeatRuns
	for i := 0; i < total; i++ {
		warm := i < lv.WarmupRuns
		idx := i
		if !warm {
			idx = i - lv.WarmupRuns
		}
		WarmConnections(ctx, b, lv)
		run := runOnce(ctx, b, lv, idx, warm, opts)
		if opts.OnRun != nil {
			opts.OnRun(run)
		}
		if !warm {
			res.Runs = append(res.Runs, run)
		}
		if run.Interrupted {
			res.Interrupted = true
			break
		}
	}
	return res
}

// RunOne runs one run of the level alone: measured run idx, or warm-up run idx when
// warm, starting at opts.StartAt when it is set. A load agent runs its share of a level
// so, one run at a time, each at the instant its lead gave; it warms the run's
// connections (WarmConnections) before that instant.
func RunOne(ctx context.Context, b backends.Backend, lv LevelSpec, idx int, warm bool, opts Options) RunResult {
	defer raiseProcs()()
	if opts.Clock == nil {
		opts.Clock = backends.SystemClock{}
	}
	return runOnce(ctx, b, lv, idx, warm, opts)
}

// WarmConnections opens the level's WarmConnections to the server before a run, where
// the backend can (backends.ConnectionWarmer): a share's part of them under a Share.
func WarmConnections(ctx context.Context, b backends.Backend, lv LevelSpec) {
	n := lv.Share.Slots(lv.WarmConnections)
	if w, ok := b.(backends.ConnectionWarmer); ok && n > 0 && ctx.Err() == nil {
		w.WarmConnections(ctx, n)
	}
}

func runOnce(ctx context.Context, b backends.Backend, lv LevelSpec, idx int, warm bool, opts Options) RunResult {
	run := RunResult{Index: idx, Warmup: warm}
	sendCtx, stopSending := sendContext(ctx, &lv, idx, warm, opts)
	defer stopSending()
	if !opts.DropSamples {
		run.Samples = make([]backends.Sample, 0, min(lv.Requests, 1<<16))
	}
	reqCtx, endRun := requestContext(ctx, opts)
	defer endRun()

	sink := make(chan toDrain, sinkBuffer(lv))
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		drain(sink, &run, opts)
	}()
	r := &runner{b: b, lv: lv, opts: opts, idx: idx, kind: "run", reqCtx: reqCtx, sink: sink}
	if warm {
		r.kind = "warmup"
	}
	slots := max(lv.Concurrency, 1)
	var wg sync.WaitGroup
	start := opts.StartAt
	switch {
	case lv.Session != nil:
		runSessions(sendCtx, opts.Clock, start, lv, slots, &wg, r.send)
	case lv.Trace != nil:
		run.Err = replayLoop(sendCtx, opts.Clock, start, lv, &wg, func(p paced) { r.send(p, nil, slotted{}) }, r.count)
	case lv.RequestRate > 0:
		openLoop(sendCtx, opts.Clock, start, lv, idx, warm, slots, &wg, func(p paced) { r.send(p, nil, slotted{}) }, r.count)
	default:
		closedLoop(sendCtx, opts.Clock, start, lv, slots, &wg, func(n int, in slotted) { r.send(paced{n: n}, nil, in) })
	}
	wg.Wait()
	close(sink)
	<-drained
	run.Interrupted = ctx.Err() != nil
	return run
}

// sendContext is what a run's loops send under: ctx, ended early once a measured run
// has enough (opts.Enough), which then sends up to lv.MaxRequests. stop releases it.
func sendContext(ctx context.Context, lv *LevelSpec, idx int, warm bool, opts Options) (sendCtx context.Context, stop func()) {
	if opts.Enough == nil || warm {
		return ctx, func() {}
	}
	lv.Requests = max(lv.Requests, lv.MaxRequests)
	sendCtx, cancel := context.WithCancel(ctx)
	go func(enough <-chan struct{}) {
		select {
		case <-enough:
			cancel()
		case <-sendCtx.Done():
		}
	}(opts.Enough(idx))
	return sendCtx, cancel
}

// runner sends one run's requests, from whichever loop drives the run, and queues
// their Samples for the drain.
type runner struct {
	b      backends.Backend
	lv     LevelSpec
	opts   Options
	idx    int
	kind   string // "run" or "warmup", in the requests' IDs
	reqCtx context.Context
	sink   chan<- toDrain
	sent   Sent // the run's prefix groups and hash blocks, for shared prefix tokens
}

// send sends request p (of session turn tr, nil: none) from closed-loop slot in.slot
// (0: a paced or session request) and queues its Sample for the drain.
func (r *runner) send(p paced, tr *turn, in slotted) backends.Sample {
	lv, opts := &r.lv, &r.opts
	req, sh := lv.request(requestID(r.kind, r.idx, p.n), p)
	tr.apply(&req)
	if closed(opts.Abort) {
		start := opts.Clock.Now()
		if p.timed {
			start, p.lag = p.sender.due(opts.Clock), p.sender.lag
			p.sender.wrote()
		}
		return r.record(backends.Sample{ID: req.ID, Start: start, Err: abortErr(*opts)}, p, tr, in, 0)
	}
	shared := p.shared
	if !p.counted {
		shared = r.sent.Add(lv.Prompts, sh) // 0 without a shape (and so without Prompts)
	}
	if _, due := r.b.(backends.DueCaller); p.timed && due {
		// The timing core waits for the request's time once its bytes are built.
		req.Due, req.Wrote, req.Turn = p.sender.due, p.sender.wrote, p.sender
		p.sender.reportsWrites()
	} else if p.timed {
		p.sender.due(nil)
	}
	s := r.b.Do(r.reqCtx, req)
	if p.timed {
		p.lag = p.sender.lag
	}
	s.MaxTokens = sh.MaxTokens // the request's own output length, kept for early stops
	if sh.Text == "" {
		s.PromptTokensAsked = sh.PromptTokens // and its own prompt length, as asked
	}
	if len(lv.Models) > 0 {
		s.Model = req.Model
	}
	if s.Err != nil && opts.Abort != nil && connectionLost(s.Err.Class) {
		blameAbort(&s, *opts)
	}
	return r.record(s, p, tr, in, shared)
}

// record queues a sent (or refused) request's Sample for the drain.
func (r *runner) record(s backends.Sample, p paced, tr *turn, in slotted, shared int) backends.Sample {
	// The request's timing is complete here: should the queue be full, waiting delays
	// this worker's next request, never the measurement of this one.
	s.Slot = in.slot
	r.sink <- toDrain{tr.finish(s, shared, p), in.ramp}
	return s
}

// count counts a paced request's shared prefix tokens in schedule order, as the loop
// hands it over (or passes it by, under a Share, for another agent to send): so they
// are counted against every earlier request of the schedule, whichever agent sends
// it, and whichever of its senders builds its request first.
func (r *runner) count(p *paced) {
	if sh := r.lv.shape(*p); sh != nil && r.lv.Prompts != nil && r.lv.Inputs == 0 {
		p.shared = r.sent.Add(r.lv.Prompts, *sh)
	}
	p.counted = true
}

// requestContext is the context a run's requests are sent with: it outlives ctx by the
// grace period (or until opts.Stop) so in-flight requests can finish. endRun releases it
// when the run is over.
func requestContext(ctx context.Context, opts Options) (reqCtx context.Context, endRun func()) {
	reqCtx, cancelReqs := context.WithCancel(context.Background())
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-stopWatch:
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(opts.Grace)
		defer t.Stop()
		select {
		case <-stopWatch:
		case <-t.C:
			cancelReqs()
		case <-opts.Stop:
			cancelReqs()
		}
	}()
	return reqCtx, func() {
		close(stopWatch)
		cancelReqs()
	}
}

// blameAbort gives a connection lost as the managed server died the server's death as its
// error rather than a network fault's: it waits briefly for the exit to be seen, then says so.
func blameAbort(s *backends.Sample, opts Options) {
	t := time.NewTimer(abortWait)
	defer t.Stop()
	select {
	case <-opts.Abort:
		e := abortErr(opts)
		e.Message += " (" + s.Err.Message + ")"
		s.Err = e
	case <-t.C:
	}
}

// request builds request p of a run, named id, from the template: its prompt and, when
// it has its own shape, its output length. The shape it was built from is returned too
// (zero: the template's), for its shared prefix and its output length.
func (lv LevelSpec) request(id string, p paced) (backends.Request, Shape) {
	req := lv.Request
	req.ID = id
	if len(lv.Models) > 0 {
		req.Model = pickModel(lv.Models, lv.Seed, p.n)
	}
	if lv.Inputs > 0 && lv.Prompts != nil {
		req.Inputs = make([]string, lv.Inputs)
		for k := range req.Inputs {
			req.Inputs[k] = lv.Prompts.Shaped(fmt.Sprintf("%s/i%d", id, k), Shape{PromptTokens: lv.InputTokens})
		}
		return req, Shape{}
	}
	sh := lv.shape(p)
	switch {
	case sh != nil && lv.Prompts != nil:
		req.Prompt = lv.Prompts.Shaped(req.ID, *sh)
		if sh.MaxTokens > 0 {
			req.MaxTokens = sh.MaxTokens
		}
		return req, *sh
	case lv.Prompts != nil:
		req.Prompt = lv.Prompts.For(req.ID)
	}
	return req, Shape{}
}

// shape is request p's own shape: a replayed row's, or its turn of Shapes; nil when
// every request is the template.
func (lv LevelSpec) shape(p paced) *Shape {
	if p.shape == nil && len(lv.Shapes) > 0 {
		return &lv.Shapes[p.n%len(lv.Shapes)]
	}
	return p.shape
}

// requestID names request n of run idx of its kind ("run0/req12"): as fmt would, in one
// allocation rather than three.
func requestID(kind string, idx, n int) string {
	var b [40]byte
	id := append(b[:0], kind...)
	id = strconv.AppendInt(id, int64(idx), 10)
	id = append(id, "/req"...)
	return string(strconv.AppendInt(id, int64(n), 10))
}

// sinkBuffer sizes a run's queue of finished requests: room for several samples per
// request in flight, so the drain goroutine only holds a request up when it falls
// behind for long.
func sinkBuffer(lv LevelSpec) int { return max(1024, 4*lv.Concurrency) }

// slotted is where a closed-loop request comes from: its slot (from 1; 0: none) and
// whether it is the slot's ramp request (LevelSpec.Ramp).
type slotted struct {
	slot int
	ramp bool
}

// toDrain is a finished request on its way to the drain, and whether it was a ramp's.
type toDrain struct {
	finished
	ramp bool
}

// drain takes finished requests off the queue one at a time: it widens the run's window,
// keeps the Sample unless told not to, and hands it to OnRequest. A ramp's requests go
// to OnRequest alone.
func drain(sink <-chan toDrain, run *RunResult, opts Options) {
	// One variable for the whole run: OnRequest gets its address, and a per-iteration f
	// would escape to the heap once per request (Event.Sample is valid only during the call).
	var f toDrain
	for f = range sink {
		s := &f.Sample
		if !f.ramp {
			if run.Start.IsZero() || s.Start.Before(run.Start) {
				run.Start = s.Start
			}
			if e := s.Start.Add(s.End); e.After(run.End) {
				run.End = e
			}
			if !opts.DropSamples {
				run.Samples = append(run.Samples, *s)
			}
		}
		if opts.OnRequest != nil {
			opts.OnRequest(Event{Run: run.Index, Warmup: run.Warmup, Sample: s, SharedPrefixTokens: f.sharedPrefix,
				Session: f.session, Turn: f.turn, NewPromptTokens: f.newPrompt, Step: f.step, ToolWait: f.toolWait, StepLimit: f.stepLimit, Paced: f.timed, Scheduled: f.at, SendLag: f.lag, Index: f.n, Ramp: f.ramp})
		}
	}
}

// closedLoop sends lv.Requests requests from slots workers, each sending its next
// request as soon as its last one finished; send gets the request's number and its
// worker's, from 1. With lv.Ramp, worker k of n first waits until k·Ramp/n into the
// loop, then sends ramp requests (numbered from lv.Requests on) back to back until the
// ramp is over, both read on clk. The loop starts at start (zero: at once). Under a
// Share, the workers are the agent's slots and send its requests, numbered, slotted
// and ramped as the whole loop's (Share).
func closedLoop(ctx context.Context, clk backends.Clock, start time.Time, lv LevelSpec, slots int, wg *sync.WaitGroup, send func(int, slotted)) {
	sh := lv.Share
	all := min(slots, lv.Requests) // the whole loop's workers, over every agent
	workers := min(sh.Slots(slots), sh.ownedSlotted(lv.Requests, slots))
	if start.IsZero() {
		start = clk.Now()
	} else if !wait(ctx, clk, start.Sub(clk.Now())) {
		return
	}
	rampEnd := start.Add(lv.Ramp)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		g := sh.slot(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lv.Ramp > 0 && wait(ctx, clk, start.Add(time.Duration(g)*lv.Ramp/time.Duration(all)).Sub(clk.Now())) {
				for k := 0; ctx.Err() == nil && (k == 0 || clk.Now().Before(rampEnd)); k++ {
					send(lv.Requests+g+k*all, slotted{g + 1, true})
				}
			}
			for n := range next {
				// The feeder may still hand out work in the instant ctx is canceled.
				if ctx.Err() == nil {
					send(n, slotted{slot: g + 1})
				}
			}
		}()
	}
	defer close(next)
	for n := 0; n < lv.Requests; n++ {
		if !sh.ownsSlotted(n, slots) {
			continue
		}
		select {
		case next <- n:
		case <-ctx.Done():
			return
		}
	}
}

// wait waits d, and reports whether ctx is still live after it. A test's clock that
// moves only as it is waited on (Wait, as the pacer's) is waited on instead of a timer.
func wait(ctx context.Context, clk backends.Clock, d time.Duration) bool {
	if d > 0 {
		if w, ok := clk.(interface{ Wait(time.Duration) }); ok {
			w.Wait(d)
			return ctx.Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return ctx.Err() == nil
}

// openLoop sends lv.Requests requests on a schedule from start (zero: at once), at
// most slots in flight; each request carries how late it was sent against its
// schedule, read on clk; count is given each request in schedule order first. Under a
// Share it sends the agent's requests of the one schedule, at most its share of slots
// in flight.
func openLoop(ctx context.Context, clk backends.Clock, start time.Time, lv LevelSpec, idx int, warm bool, slots int, wg *sync.WaitGroup,
	send func(paced), count func(*paced)) {
	seed := lv.Seed + uint64(idx)*7919
	if warm {
		seed += 1 << 32
	}
	p := newPacer(ctx, clk, start, max(lv.Share.Slots(slots), 1), wg, send)
	defer p.stop()
	for n, at := range Schedule(lv.RequestRate, lv.Arrival, lv.Requests, seed) {
		r := paced{n: n, at: at}
		count(&r)
		if lv.Share.ownsPaced(n) && !p.send(r) {
			return
		}
	}
}

// Schedule returns the send offsets of n requests at rate per second: exponential gaps
// (a Poisson process) or constant gaps. The first request is sent at once.
func Schedule(rate float64, arrival string, n int, seed uint64) []time.Duration {
	out := make([]time.Duration, n)
	if rate <= 0 {
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	mean := float64(time.Second) / rate
	var t float64
	for i := 1; i < n; i++ {
		if arrival == "constant" {
			t += mean
		} else {
			t += rng.ExpFloat64() * mean
		}
		out[i] = time.Duration(t)
	}
	return out
}

// abortWait is how long a request that lost its connection waits to learn whether the
// managed server died.
const abortWait = time.Second

func connectionLost(c backends.ErrorClass) bool {
	return c == backends.ErrRefused || c == backends.ErrStreamCut || c == backends.ErrOther
}

func abortErr(opts Options) *backends.Error {
	if opts.AbortErr != nil {
		e := *opts.AbortErr
		return &e
	}
	return &backends.Error{Class: backends.ErrServerDied, Message: "the server stopped before this request was sent"}
}

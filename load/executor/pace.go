package executor

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planrun/planrun/backends"
)

// paced is one request to send: its number in the run and, in open loop and replay, when
// it was due and how late it went out.
type paced struct {
	n       int
	timed   bool
	at, lag time.Duration
	// shape is a replayed row's own; nil takes LevelSpec.Shapes' turn.
	shape *Shape
	// shared are its shared prefix tokens (Sent.Add), when the loop counted them in
	// schedule order (counted).
	shared  int
	counted bool
	// gate is where a timed request waits, once built, for the dispatcher to release it;
	// sender is the pacer's goroutine that builds and sends it (its due is Request.Due).
	gate   *gate
	sender *sender
}

// finished is a request's Sample with its send time against its schedule, queued for
// drain: the lag travels with the request, so no run keeps a slice of them; and with
// what the drain hands on with it.
type finished struct {
	backends.Sample
	paced
	// sharedPrefix are its prompt tokens that an earlier request of the run already sent
	// (Sent.Add); session and turn its place in a session workload (0: none), newPrompt
	// the prompt tokens a session's turn added to its conversation (Event.NewPromptTokens).
	sharedPrefix  int
	session, turn int
	newPrompt     int
	// step, toolWait and stepLimit place a request in its agent loop (Event.Step).
	step      int
	toolWait  time.Duration
	stepLimit bool
}

// pacer sends requests at their offsets from its start, read on clk, with at most slots
// in flight (0: no cap). The open loop and trace replay share it, so both record send
// lag the same way. Three parts, so that neither building a request nor a late timer
// makes it late, and a burst goes out in its schedule's order:
//   - the feeder (the caller of send, in schedule order) hands each request, buildAhead
//     before its time, to an idle sender goroutine and queues its gate;
//   - the sender builds the request and sends it: its connection holds its first write
//     at its gate (Send, through Request.Turn), or, where the connection cannot hold
//     it or the backend sends no other way, the sender parks there itself (onTime,
//     through Request.Due);
//   - one dispatcher goroutine owns the schedule: it takes the gates in order, waits for
//     each one's time (until) and opens it once the request before has taken its start
//     stamp, at most orderGrace past its time. Opening a gate with a write held there
//     makes the write (open), so a burst's bytes leave the client in the schedule's
//     order from this one goroutine: in docs/performance.md#set-7, no request of a bursty replay
//     reached the server out of order in 8 runs, against 1 a run (max 2) when each
//     request's own write loop wrote it once its gate opened.
type pacer struct {
	ctx   context.Context
	clk   backends.Clock
	t0    time.Time
	sem   chan struct{} // nil: no cap
	timer *time.Timer
	wg    *sync.WaitGroup
	do    func(paced)
	// work hands a request to an idle sender (unbuffered: a send succeeds only when one
	// waits); gates queues their gates to the dispatcher in schedule order, and free
	// keeps the gates senders are done with.
	work  chan paced
	gates chan *gate
	free  chan *gate
	// sent numbers the requests handed over, in schedule order; stamped is the highest
	// number that has taken its start stamp, and written how many have gone out
	// (Request.Wrote), where the backend says (writes).
	sent             uint64
	stamped, written atomic.Uint64
	writes           atomic.Bool
	wait             waiter
}

// gate is one timed request's place in the dispatcher's queue: its time and its number;
// whether the dispatcher has reached it (opened), and whether its sender waits for that
// (waiting, woken on wake, buffered one) in Request.Due or with its first write held
// for the dispatcher to make (send, stamped on stamp, by sender by).
type gate struct {
	at  time.Duration
	seq uint64

	mu      sync.Mutex
	opened  bool
	waiting bool
	send    backends.Sender
	stamp   backends.Clock
	by      *sender
	wake    chan struct{}
}

// newGate is a gate with its wake channel.
func newGate() *gate { return &gate{wake: make(chan struct{}, 1)} }

// sender is one of a pacer's goroutines; it sends one request at a time. due and wrote
// are its onTime and onWrote, bound once, so a request's Request.Due and Request.Wrote
// cost no allocation.
type sender struct {
	p     *pacer
	r     paced
	lag   time.Duration
	due   func(backends.Clock) time.Time
	wrote func()
}

// The pacer's bounds. buildAhead is how long before its time a request is handed to a
// sender: time to wake on the runtime timer (up to a millisecond late) and build it.
// The dispatcher waits for a request's time on the runtime timer until preciseTail
// before it, then in thread-blocking nanosleeps of at most preciseStep until spinTail
// before it (a nanosleep wakes some 50 µs late, the kernel's timer slack: with a shorter
// spinTail the last one lands past the time), then reads the clock in a loop: at most
// spinTail of one core a request, about half of it in practice (5–10% of a core at
// 1,000 requests/s). orderGrace bounds how long past its time a request waits for the one
// before it to take its start stamp: only a request starved of the CPU, or a backend
// whose Do never calls Due, holds the next one up, and never by more. writeGrace bounds
// how long it waits, past its time, for the ones due before it to have gone out: longer,
// since a write that trails its stamp (the transport's write loop descheduled for a
// moment) would otherwise let the next request reach the server first. With 250 µs
// there, a quiet bursty replay still saw some 20 pairs a run arrive out of order at the
// server's socket.
const (
	buildAhead  = 3 * time.Millisecond
	preciseTail = 1500 * time.Microsecond
	preciseStep = 100 * time.Microsecond
	spinTail    = 100 * time.Microsecond
	orderGrace  = 250 * time.Microsecond
	turnStep    = 10 * time.Microsecond
	writeGrace  = 2 * time.Millisecond
)

// startLead is how far after the pacer's creation its schedule starts: a request due at
// 0 (a trace's first row, an open loop's first request) is then handed over buildAhead
// before its time like every other, where it would be built and stamped late. Without
// it, in a trial build that waited 300 µs for writes, the first rows of a bursty replay
// went out 0.35–0.4 ms late and reached the server out of order. Scheduled times stay
// offsets from the schedule's start, and the delivered rate is judged between the first
// and last stamps, so the lead shows in neither.
const startLead = buildAhead

// queued bounds the gates queued to the dispatcher and the gates kept for reuse.
const queued = 1024

// waiter is how the pacer waits a stretch read on its clock: the dispatcher on the
// runtime timer, in a nanosleep, or (spin) one turn of reading the clock; the feeder
// (hold) until a request is due to be handed over, false when ctx ends first. pause is
// the dispatcher's wait for its turn (awaitTurn), a nanosleep on the real clock however
// the pacer reads time. Tests count them.
type waiter struct {
	sleep, nap, pause func(time.Duration)
	spin              func()
	hold              func(ctx context.Context, d time.Duration) bool
}

// newPacer starts a pacer whose schedule starts at start, or startLead from now when
// start is zero.
func newPacer(ctx context.Context, clk backends.Clock, start time.Time, slots int, wg *sync.WaitGroup, do func(paced)) *pacer {
	p := &pacer{ctx: ctx, clk: clk, timer: time.NewTimer(0), wg: wg, do: do, work: make(chan paced),
		gates: make(chan *gate, queued), free: make(chan *gate, queued)}
	p.wait = waiter{sleep: time.Sleep, nap: nanosleep, pause: nanosleep, spin: func() {}, hold: p.timerHold}
	if slots > 0 {
		p.sem = make(chan struct{}, slots)
	}
	if w, ok := clk.(interface{ Wait(time.Duration) }); ok {
		// A test's clock that moves only as the pacer waits on it (Wait(0): one turn of
		// the spin), so its send lags and hand-over times are exact.
		p.wait = waiter{sleep: w.Wait, nap: w.Wait, pause: nanosleep, spin: func() { w.Wait(0) }, hold: p.clockHold(w.Wait)}
	}
	p.t0 = start
	if start.IsZero() {
		p.t0 = clk.Now().Add(startLead)
	}
	wg.Add(1)
	go p.dispatch(holdGC())
	return p
}

// gcBudget is how far the process's memory may grow while a paced run sends before the
// collector runs. A collection delays the sends around it (its pauses, its assists, and
// on two cores a quarter of the CPU while it marks): at the default GOGC, a client
// sending 1,000 requests/s collected several times a second, and its send lag p99 was
// 1.2–1.4 ms against 0.8 ms with the collector off. 512 MiB holds many seconds of a
// paced run's garbage; past it the collector runs as usual (a memory limit, never above
// one already set).
const gcBudget = 512 << 20

// gcKnobs are the runtime's collector settings (runtime/debug) and the memory the limit
// counts; a variable, so tests see what a paced run does with them.
type gcKnobs struct {
	percent func(int) int
	limit   func(int64) int64
	used    func() int64
}

var gc = gcKnobs{percent: debug.SetGCPercent, limit: debug.SetMemoryLimit, used: memoryUsed}

// memoryUsed is the memory a limit counts: what the runtime holds from the OS, less what
// it has given back.
func memoryUsed() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Sys - m.HeapReleased)
}

// gcHeld counts the paced runs sending now, and keeps the settings they put aside.
var gcHeld struct {
	sync.Mutex
	n       int
	percent int
	limit   int64
}

// holdGC puts the collector off while a paced run sends, to gcBudget past the memory used
// now: the collector is turned off (SetGCPercent(-1)) under a memory limit. The last of
// overlapping holds to be released puts the settings back.
func holdGC() (release func()) {
	gcHeld.Lock()
	defer gcHeld.Unlock()
	if gcHeld.n == 0 {
		gcHeld.limit = gc.limit(-1)
		gcHeld.percent = gc.percent(-1)
		if gcHeld.percent >= 0 { // off already (GOGC=off): its limit, if any, stays as set
			gc.limit(min(gcHeld.limit, gc.used()+gcBudget))
		}
	}
	gcHeld.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcHeld.Lock()
			defer gcHeld.Unlock()
			if gcHeld.n--; gcHeld.n == 0 {
				gc.limit(gcHeld.limit)
				gc.percent(gcHeld.percent)
			}
		})
	}
}

// timerHold is the feeder's wait on the runtime timer: d, or false when ctx ends first.
func (p *pacer) timerHold(ctx context.Context, d time.Duration) bool {
	p.timer.Reset(d)
	select {
	case <-p.timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// clockHold is the feeder's wait on a clock that moves only as the pacer waits on it:
// until the dispatcher has let every request handed over take its start stamp (nothing
// else moves the clock then), and then what is left of d itself. A request is then
// handed over exactly buildAhead before its time whenever none before it is pending, and
// the clock never jumps past a request still waiting for its time.
func (p *pacer) clockHold(wait func(time.Duration)) func(context.Context, time.Duration) bool {
	return func(ctx context.Context, d time.Duration) bool {
		until := p.since() + d
		for p.stamped.Load() < p.sent && ctx.Err() == nil {
			runtime.Gosched()
		}
		if left := until - p.since(); left > 0 && ctx.Err() == nil {
			wait(left)
		}
		return ctx.Err() == nil
	}
}

// since is the time on the pacer's clock since its start.
func (p *pacer) since() time.Duration { return p.clk.Now().Sub(p.t0) }

// send hands r, once a slot is free, to a sender buildAhead before r.at from the pacer's
// start; it returns false, handing over nothing, when ctx ends first.
func (p *pacer) send(r paced) bool {
	if d := r.at - buildAhead - p.since(); d > 0 && !p.wait.hold(p.ctx, d) {
		return false
	}
	if p.sem != nil {
		select {
		case p.sem <- struct{}{}:
		case <-p.ctx.Done():
			return false
		}
	}
	var g *gate
	select {
	case g = <-p.free:
	default:
		g = newGate()
	}
	p.sent++
	g.at, g.seq = r.at, p.sent
	r.timed, r.gate = true, g
	select {
	case p.work <- r:
	default: // every sender is busy: one more
		p.wg.Add(1)
		go p.run(r)
	}
	p.gates <- g
	return true
}

// run is a sender's loop: it sends r, then each request handed to it, until stop.
func (p *pacer) run(r paced) {
	defer p.wg.Done()
	s := &sender{p: p}
	s.due, s.wrote = s.onTime, s.onWrote
	for ok := true; ok; r, ok = <-p.work {
		r.sender, s.r, s.lag = s, r, 0
		p.do(r)
		if p.sem != nil {
			<-p.sem
		}
	}
}

// onTime waits at the request's gate until the dispatcher opens it, then stamps its start
// on stamp (nil: none, the caller sends after onTime returns) and records how late it is
// against its schedule on the pacer's clock. The stamp is taken before the next request
// may go, so start stamps keep the schedule's order. It returns the stamp; s.lag is the
// lag.
func (s *sender) onTime(stamp backends.Clock) time.Time {
	g := s.r.gate
	g.wait(nil, nil, nil)
	t := s.stampNow(stamp)
	s.p.recycle(g)
	return t
}

// Send implements backends.Turn: it holds the request's first write (w) at its gate for
// the dispatcher to make at its time, or, when the dispatcher is past the gate already,
// makes it now. Either way the start stamp is taken just before, as onTime takes it.
func (s *sender) Send(stamp backends.Clock, w backends.Sender) {
	g := s.r.gate
	if !g.wait(w, stamp, s) {
		w.SendAt(s.stampNow(stamp))
	}
	s.p.recycle(g)
}

// wait parks at g until the dispatcher opens it, leaving send (nil: none) there for it
// to make, stamped on stamp by by; made says the dispatcher made it, false when g was
// open already (and nothing was left there).
func (g *gate) wait(send backends.Sender, stamp backends.Clock, by *sender) (made bool) {
	g.mu.Lock()
	if g.opened {
		g.mu.Unlock()
		return false
	}
	g.send, g.stamp, g.by, g.waiting = send, stamp, by, true
	g.mu.Unlock()
	<-g.wake
	return send != nil
}

// stampNow takes the request's start stamp on stamp (nil: none), records its lag and
// counts it as stamped.
func (s *sender) stampNow(stamp backends.Clock) time.Time {
	var t time.Time
	if stamp != nil {
		t = stamp.Now()
	}
	s.lag = s.p.since() - s.r.at
	raise(&s.p.stamped, s.r.gate.seq)
	return t
}

// recycle keeps g, which its sender is done with, for reuse.
func (p *pacer) recycle(g *gate) {
	g.opened, g.waiting, g.send, g.stamp, g.by = false, false, nil, nil, nil
	select {
	case p.free <- g:
	default:
	}
}

// open opens g: the dispatcher makes the first write held there, if any, and wakes the
// sender waiting there, if any; woke says whether one waits in Request.Due (and so has
// yet to stamp). A gate whose sender comes later finds it open and goes at once. Once it
// is unlocked g is touched only while its sender waits on it (it may be reused after).
func (p *pacer) open(g *gate) (woke bool) {
	g.mu.Lock()
	g.opened = true
	send, waiting := g.send, g.waiting
	g.mu.Unlock()
	if send != nil {
		send.SendAt(g.by.stampNow(g.stamp))
	}
	if waiting {
		g.wake <- struct{}{}
	}
	return waiting && send == nil
}

// onWrote counts the request as gone out (Request.Wrote, once a request).
func (s *sender) onWrote() { s.p.written.Add(1) }

// reportsWrites says that this run's backend calls Request.Wrote: the dispatcher then
// holds each request back until every one before, if due earlier, has gone out.
func (s *sender) reportsWrites() { s.p.writes.Store(true) }

// raise sets n to at least v.
func raise(n *atomic.Uint64, v uint64) {
	for m := n.Load(); m < v && !n.CompareAndSwap(m, v); m = n.Load() {
	}
}

// dispatch opens the gates in schedule order, each at its time (until) once the request
// before it has taken its start stamp (awaitTurn), making the write held there, if any;
// when it woke a sender waiting in onTime instead, it yields the processor to it,
// readied on it, so that one stamps at once. Once the last is open it releases the
// collector (holdGC).
func (p *pacer) dispatch(releaseGC func()) {
	defer p.wg.Done()
	defer releaseGC()
	// The first gate's prevAt does not matter: no request is before it to wait for.
	var prevAt time.Duration
	for g := range p.gates {
		// g is read before it opens: once its sender has stamped, the feeder may reuse it.
		at := g.at
		p.awaitTurn(g, prevAt)
		p.until(at)
		prevAt = at
		if p.open(g) {
			runtime.Gosched()
		}
	}
}

// awaitTurn waits until the request before g has taken its start stamp and, if it was
// due earlier (at prevAt) and the backend says, every one before g has gone out: for the
// stamp at most until orderGrace past g's time, for the writes until writeGrace past it.
// Rows due at one instant need only stamp in order, so they do not queue on each other's
// writes. It waits before g's own wait, so the clock moves on to g's time only once the
// one before has read it (a test's clock that moves as the pacer waits then gives exact
// stamps). It waits off the CPU, in pauses of turnStep (a nanosleep), however close g's
// time: what it waits for runs on the client's other threads, and a dispatcher spinning
// beside them took the core they needed. Spinning here once g's time was within spinTail,
// on 2 cores shared with a server, a bursty replay's send lag p99 was 1.72 ms against
// 0.29 ms with pauses (medians of 8 runs, docs/performance.md#set-5): a request's write, descheduled,
// held the next ones up to writeGrace.
func (p *pacer) awaitTurn(g *gate, prevAt time.Duration) {
	prev := g.seq - 1
	for {
		stamping := p.stamped.Load() < prev
		if !stamping && !(prevAt < g.at && p.writes.Load() && p.written.Load() < prev) {
			return
		}
		grace := writeGrace
		if stamping {
			grace = orderGrace
		}
		if g.at-p.since() < -grace {
			return
		}
		p.wait.pause(turnStep)
	}
}

// until waits until at from the pacer's start and returns how late it is then.
func (p *pacer) until(at time.Duration) time.Duration {
	for {
		left := at - p.since()
		switch {
		case left <= 0:
			return -left
		case left > preciseTail:
			p.wait.sleep(left - preciseTail)
		case left > spinTail:
			p.wait.nap(min(left-spinTail, preciseStep))
		default:
			p.wait.spin()
		}
	}
}

// stop ends the pacer once every request has been handed over: the senders finish what
// they hold, the dispatcher opens every gate queued, and both exit (the WaitGroup).
func (p *pacer) stop() {
	p.timer.Stop()
	close(p.work)
	close(p.gates)
}

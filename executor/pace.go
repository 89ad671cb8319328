package executor

import (
	"context"
	"runtime"
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
	// early is set when the request was handed over before its time: once built, it
	// waits out the rest (pacer.until), which gives its lag.
	early *pacer
	// pacer sent it, and seq is its place in the pacer's order (from 1): once built, it
	// goes out on its time and after every request before it (pacer.onTime).
	pacer *pacer
	seq   uint64
}

// finished is a request's Sample with its send time against its schedule, queued for
// drain: the lag travels with the request, so no run keeps a slice of them; and with
// what the drain hands on with it.
type finished struct {
	backends.Sample
	paced
	// sharedPrefix are its prompt tokens that an earlier request of the run already sent
	// (Sent.Add); session and turn its place in a session workload (0: none).
	sharedPrefix  int
	session, turn int
}

// pacer sends requests at their offsets from its start, read on clk, with at most slots
// in flight (0: no cap). The open loop and trace replay share it, so both record send
// lag the same way.
type pacer struct {
	ctx   context.Context
	clk   backends.Clock
	t0    time.Time
	sem   chan struct{} // nil: no cap
	timer *time.Timer
	wg    *sync.WaitGroup
	do    func(paced)
	// sent numbers the requests handed over, in schedule order; turn is the highest
	// number that has gone out (onTime), so a burst goes out in its trace's order.
	sent uint64
	turn atomic.Uint64
}

func newPacer(ctx context.Context, clk backends.Clock, slots int, wg *sync.WaitGroup, do func(paced)) *pacer {
	p := &pacer{ctx: ctx, clk: clk, timer: time.NewTimer(0), wg: wg, do: do}
	if slots > 0 {
		p.sem = make(chan struct{}, slots)
	}
	p.t0 = clk.Now()
	return p
}

// send sends r on its own goroutine at r.at from the pacer's start, read on clk, once a
// slot is free; it returns false, sending nothing, when ctx ends first. The pacer waits
// on the runtime timer until just before r.at; the request's goroutine then builds the
// request and waits out the rest in short thread-blocking sleeps (until), so neither a
// late timer nor building the prompt makes the request late.
func (p *pacer) send(r paced) bool {
	d := r.at - p.clk.Now().Sub(p.t0)
	if d > preciseTail {
		p.timer.Reset(d - preciseTail)
		select {
		case <-p.timer.C:
		case <-p.ctx.Done():
			return false
		}
	}
	if p.sem != nil {
		select {
		case p.sem <- struct{}{}:
		case <-p.ctx.Done():
			return false
		}
	}
	r.timed = true
	p.sent++
	r.pacer, r.seq = p, p.sent
	if d > 0 {
		r.early = p
	} else {
		r.lag = p.clk.Now().Sub(p.t0) - r.at
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if p.sem != nil {
			defer func() { <-p.sem }()
		}
		p.do(r)
	}()
	return true
}

// preciseTail is the last part of a wait spent in short thread-blocking sleeps rather
// than on the runtime timer (which may fire up to a millisecond late), and preciseStep
// the longest of them; spinTail is the very last part, spent reading the clock, since
// a nanosleep itself wakes some 50 µs late (the kernel's timer slack): requests then go
// out within microseconds of schedule, for at most spinTail of one core per request
// (10% of a core at 1,000 requests/s). orderWait bounds how long a request that is due
// waits for an earlier one to go out first: every request handed over goes out, so it
// only matters when one is starved of the CPU (or a backend's Do never calls Due).
const (
	preciseTail = 1500 * time.Microsecond
	preciseStep = 100 * time.Microsecond
	spinTail    = 100 * time.Microsecond
	orderWait   = 20 * time.Millisecond
)

// until waits until at from the pacer's start and returns how late it is then.
func (p *pacer) until(at time.Duration) time.Duration {
	for {
		late := p.clk.Now().Sub(p.t0) - at
		if late >= 0 {
			return late
		}
		if -late > spinTail {
			nanosleep(min(-late-spinTail, preciseStep))
		} else {
			// Spin, but let other goroutines have the P: on two cores two spinning
			// requests would otherwise keep an earlier one, back from its nanosleep, waiting.
			runtime.Gosched()
		}
	}
}

// onTime waits, once r is built, until r is due and every request handed over before
// it has gone out (at most orderWait longer), then stamps r's start on stamp and marks
// it gone out, and returns the stamp and how late r went out against its schedule. The
// stamp is taken before the next request may go, so start stamps keep the schedule's
// order. The timing core calls it through Request.Due, once the request's bytes are
// built. A request handed over late keeps the lag read then, unless it waited its turn.
func (p *pacer) onTime(r *paced, stamp backends.Clock) (time.Time, time.Duration) {
	late := r.lag
	if r.early != nil {
		late = p.until(r.at)
	}
	waited := false
	for i := 0; p.turn.Load() < r.seq-1; i++ {
		waited = true
		if i%64 == 63 && p.clk.Now().Sub(p.t0)-r.at > orderWait {
			break // the earlier request is starved (or a backend never called Due)
		}
		if i < 64 {
			runtime.Gosched()
		} else {
			nanosleep(10 * time.Microsecond)
		}
	}
	if waited {
		late = p.clk.Now().Sub(p.t0) - r.at
	}
	var t time.Time // no stamp: the caller sends after onTime returns
	if stamp != nil {
		t = stamp.Now()
	}
	for n := p.turn.Load(); n < r.seq && !p.turn.CompareAndSwap(n, r.seq); n = p.turn.Load() {
	}
	return t, late
}

func (p *pacer) stop() { p.timer.Stop() }

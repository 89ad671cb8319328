package executor

import (
	"context"
	"sync"
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
// the longest of them: requests then go out within tens of microseconds of schedule.
const (
	preciseTail = 1500 * time.Microsecond
	preciseStep = 100 * time.Microsecond
)

// until waits until at from the pacer's start and returns how late it is then.
func (p *pacer) until(at time.Duration) time.Duration {
	for {
		late := p.clk.Now().Sub(p.t0) - at
		if late >= 0 {
			return late
		}
		nanosleep(min(-late, preciseStep))
	}
}

func (p *pacer) stop() { p.timer.Stop() }

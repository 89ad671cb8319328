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
}

// finished is a request's Sample with its send time against its schedule, queued for
// drain: the lag travels with the request, so no run keeps a slice of them.
type finished struct {
	backends.Sample
	paced
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

// send waits until r.at (the timer waits out the gap clk says is left, so the schedule
// keeps to clk's time), then for a free slot, and sends r on its own goroutine. It
// returns false, sending nothing, when ctx ends first.
func (p *pacer) send(r paced) bool {
	if d := r.at - p.clk.Now().Sub(p.t0); d > 0 {
		p.timer.Reset(d)
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
	r.timed, r.lag = true, p.clk.Now().Sub(p.t0)-r.at
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

func (p *pacer) stop() { p.timer.Stop() }

package executor

import (
	"context"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
)

// TraceRow is one request of a replayed trace.
type TraceRow struct {
	// At is when the row is sent, from the run's start: its trace time less the window's
	// start, divided by the speedup.
	At    time.Duration
	Shape Shape
}

// Trace streams a replay's rows, in time order, into rows until they end or ctx is
// done, and returns why it stopped early (nil at the end of the rows or on ctx). It runs
// on its own goroutine and rows is bounded, so the trace is read only as fast as it is
// sent and never held whole; the executor closes rows when it returns.
type Trace func(ctx context.Context, rows chan<- TraceRow) error

// traceBuffer is how many rows the trace's reader may read ahead of the schedule, and
// settle how long a replay waits before its first request.
const (
	traceBuffer = 256
	settle      = 20 * time.Millisecond
)

// replayLoop sends the rows lv.Trace streams, each at its own offset from start (zero:
// once the reader is ahead) and with its own shape, at most lv.Concurrency in flight (0:
// no cap); count is given each row in order first. Under a Share it sends the agent's
// rows, at most its share of the cap in flight. It returns the trace's error.
func replayLoop(ctx context.Context, clk backends.Clock, start time.Time, lv LevelSpec, wg *sync.WaitGroup, send func(paced), count func(*paced)) error {
	rctx, cancel := context.WithCancel(ctx)
	rows := make(chan TraceRow, traceBuffer)
	errc := make(chan error, 1)
	read := make(chan struct{}) // closed when the reader is done
	go func() {
		defer close(rows)
		defer close(read)
		errc <- lv.Trace(rctx, rows)
	}()
	defer func() {
		cancel()
		for range rows { // let a reader blocked on a full channel see the cancel
		}
	}()
	var p *pacer
	for n := 0; ; n++ {
		var r TraceRow
		var ok bool
		select {
		case r, ok = <-rows:
		case <-ctx.Done():
			return nil
		}
		if !ok {
			return <-errc
		}
		if p == nil {
			// The run starts once the reader has filled its buffer and the level's
			// monitors, started just before, have taken their first samples: either
			// would otherwise delay the first requests, against which all are timed.
			for settled := time.Now().Add(settle); (time.Now().Before(settled) || len(rows) < cap(rows) && !closed(read)) && ctx.Err() == nil; {
				time.Sleep(50 * time.Microsecond)
			}
			cap := lv.Share.Slots(lv.Concurrency)
			if lv.Concurrency > 0 {
				cap = max(cap, 1)
			}
			p = newPacer(ctx, clk, start, cap, wg, send)
			defer p.stop()
		}
		pr := paced{n: n, at: r.At, shape: &r.Shape}
		count(&pr)
		if lv.Share.ownsPaced(n) && !p.send(pr) {
			return nil
		}
	}
}

// closed reports, without blocking, whether ch is closed; a nil ch (no abort signal
// given) never is.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

package mockserver

import (
	"context"
	"sync"
	"time"
)

// clock is where the server reads time and waits. The real one uses one reusable timer
// per stream; the fake one (tests) jumps to each deadline so golden streams are exact.
type clock interface {
	Now() time.Time
	// newWaiter returns a waiter owned by one stream goroutine.
	newWaiter() waiter
}

type waiter interface {
	// waitUntil blocks until t, or returns false when ctx ends first.
	waitUntil(ctx context.Context, t time.Time) bool
	stop()
}

// realClock waits on runtime timers. precise, when set, says the server is lightly loaded:
// then the last stretch of each wait is a thread-blocking nanosleep, because an idle Go
// runtime wakes timers through epoll's millisecond timeout and fires them up to 1 ms late
// (measured here: p50 0.56 ms late at one stream). Under load timers fire within tens of
// microseconds anyway, and blocking a thread per stream would cost thousands of threads.
type realClock struct{ precise func() bool }

// preciseStreams is the most running streams for which waits end in a nanosleep.
const preciseStreams = 16

// preciseTail is how much of a wait the nanosleep covers.
const preciseTail = 1500 * time.Microsecond

func (realClock) Now() time.Time { return time.Now() }

func (c realClock) newWaiter() waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerWaiter{t: t, precise: c.precise}
}

// timerWaiter reuses one timer for every chunk of a stream: no allocation per chunk and
// no busy loop, and deadlines are absolute so timer lateness never accumulates.
type timerWaiter struct {
	t       *time.Timer
	precise func() bool
}

func (w *timerWaiter) waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if w.precise != nil && w.precise() {
		if d > preciseTail && !w.timer(ctx, d-preciseTail) {
			return false
		}
		if d := time.Until(t); d > 0 {
			nanosleep(d)
		}
		return ctx.Err() == nil
	}
	return w.timer(ctx, d)
}

func (w *timerWaiter) timer(ctx context.Context, d time.Duration) bool {
	w.t.Reset(d)
	select {
	case <-w.t.C:
		return true
	case <-ctx.Done():
		w.t.Stop()
		return false
	}
}

func (w *timerWaiter) stop() { w.t.Stop() }

// fakeClock starts at a fixed instant, advances by step on every reading (so durations
// are never zero, as on a real machine) and jumps straight to every deadline.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *fakeClock) newWaiter() waiter { return c }

func (c *fakeClock) waitUntil(ctx context.Context, t time.Time) bool {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
	return ctx.Err() == nil
}

func (c *fakeClock) stop() {}

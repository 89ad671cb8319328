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

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) newWaiter() waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerWaiter{t: t}
}

// timerWaiter reuses one timer for every chunk of a stream: no allocation per chunk and
// no busy loop, and deadlines are absolute so timer lateness never accumulates.
type timerWaiter struct{ t *time.Timer }

func (w *timerWaiter) waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
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

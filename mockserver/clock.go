package mockserver

import (
	"context"
	"sync"
	"time"
)

// clock is where the server reads time and waits. The real one parks streams on one
// shared waker; the fake one (tests) jumps to each deadline so golden streams are exact.
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

// realClock reads time.Now and waits on the server's shared waker.
type realClock struct{ w *waker }

func (realClock) Now() time.Time { return time.Now() }

func (c realClock) newWaiter() waiter {
	// A canceled stream may leave a wake-up in flight; a fresh channel per stream keeps
	// it from waking the next one early.
	return &wakeWaiter{w: c.w, ch: make(chan struct{}, 1)}
}

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

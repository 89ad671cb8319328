package mockserver

import (
	"context"
	"sync"
	"time"
)

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

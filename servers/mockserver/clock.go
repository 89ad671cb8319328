package mockserver

import (
	"context"
	"time"
)

// clock is where the server reads time and waits. The real one parks streams on one
// shared waker; the fake one (clock_test.go) jumps to each deadline so golden streams are exact.
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

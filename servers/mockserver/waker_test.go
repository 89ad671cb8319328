package mockserver

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestWakerNeverEarly parks many streams on one waker with scattered deadlines: every
// one must wake, none before its deadline, and the scheduler must stop once idle.
func TestWakerNeverEarly(t *testing.T) {
	w := newWaker()
	clk := realClock{w: w}
	const streams = 200
	base := time.Now()
	var wg sync.WaitGroup
	early := make(chan time.Duration, streams*3)
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wt := clk.newWaiter()
			defer wt.stop()
			for k := 0; k < 3; k++ {
				due := base.Add(time.Duration((i*37+k*911)%3000) * time.Microsecond)
				if !wt.waitUntil(context.Background(), due) {
					t.Error("waitUntil returned false without cancellation")
				}
				if now := time.Now(); now.Before(due) {
					early <- due.Sub(now)
				}
			}
		}()
	}
	wg.Wait()
	close(early)
	for d := range early {
		t.Errorf("woke %v before the deadline", d)
	}
}

func TestWakerCancel(t *testing.T) {
	clk := realClock{w: newWaker()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wt := clk.newWaiter()
	if wt.waitUntil(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("a canceled wait reported success")
	}
	// The abandoned entry must not wake a later wait on another waiter early.
	wt2 := clk.newWaiter()
	due := time.Now().Add(2 * time.Millisecond)
	if !wt2.waitUntil(context.Background(), due) || time.Now().Before(due) {
		t.Fatal("second waiter woke early or failed")
	}
}

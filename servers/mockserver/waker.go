package mockserver

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// waker is one scheduler for every stream's waits. Streams push (deadline, channel) and
// park; a single goroutine sleeps until the earliest deadline and wakes every stream due
// by then in one batch. Thousands of streams then cost one timer, not thousands firing
// apart, and the last stretch of each sleep is a thread-blocking nanosleep in small
// steps, so emission stays within tens of microseconds of schedule at one stream or at
// thousands (an idle Go runtime fires plain timers up to 1 ms late).
type waker struct {
	base time.Time // deadlines are nanoseconds from base (monotonic)

	mu      sync.Mutex
	h       wakeHeap
	running bool          // the scheduler goroutine is alive
	kick    chan struct{} // a new earliest deadline: cut the coarse sleep short
}

// preciseTail is the part of a sleep spent in nanosleep steps rather than on a runtime
// timer, and preciseStep the longest single nanosleep (how late a newly earlier deadline
// can be noticed).
const (
	preciseTail = 1500 * time.Microsecond
	preciseStep = 100 * time.Microsecond
)

func newWaker() *waker {
	return &waker{base: time.Now(), kick: make(chan struct{}, 1)}
}

type wakeEntry struct {
	due int64
	ch  chan struct{}
}

type wakeHeap []wakeEntry

func (h wakeHeap) Len() int           { return len(h) }
func (h wakeHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h wakeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)        { *h = append(*h, x.(wakeEntry)) }
func (h *wakeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (w *waker) now() int64 { return int64(time.Since(w.base)) }

// add schedules a wake-up of ch at due.
func (w *waker) add(due time.Time, ch chan struct{}) {
	e := wakeEntry{due: int64(due.Sub(w.base)), ch: ch}
	w.mu.Lock()
	heap.Push(&w.h, e)
	first := w.h[0].ch == ch
	start := !w.running
	w.running = true
	w.mu.Unlock()
	if start {
		go w.loop()
		return
	}
	if first {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// loop wakes due streams until none is waiting, then exits (add restarts it), so an idle
// server holds no goroutine.
func (w *waker) loop() {
	var timer *time.Timer
	var batch []chan struct{}
	for {
		now := w.now()
		w.mu.Lock()
		for len(w.h) > 0 && w.h[0].due <= now {
			batch = append(batch, heap.Pop(&w.h).(wakeEntry).ch)
		}
		next := int64(-1)
		if len(w.h) > 0 {
			next = w.h[0].due
		} else if len(batch) == 0 {
			w.running = false
			w.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return
		}
		w.mu.Unlock()

		for i, ch := range batch {
			select {
			case ch <- struct{}{}:
			default: // the stream left (canceled); its buffered slot is still full
			}
			batch[i] = nil
		}
		batch = batch[:0]
		if next < 0 {
			continue // the list emptied while waking: check once more, then exit
		}
		d := time.Duration(next - w.now())
		switch {
		case d <= 0:
		case d > preciseTail:
			if timer == nil {
				timer = time.NewTimer(d - preciseTail)
			} else {
				timer.Reset(d - preciseTail)
			}
			select {
			case <-timer.C:
			case <-w.kick:
				timer.Stop()
			}
		default:
			nanosleep(min(d, preciseStep))
		}
	}
}

// wakeWaiter is one stream's handle on the waker: its channel is reused for every chunk.
type wakeWaiter struct {
	w  *waker
	ch chan struct{}
}

func (ww *wakeWaiter) waitUntil(ctx context.Context, t time.Time) bool {
	if time.Until(t) <= 0 {
		return ctx.Err() == nil
	}
	ww.w.add(t, ww.ch)
	select {
	case <-ww.ch:
		return true
	case <-ctx.Done():
		return false
	}
}

func (ww *wakeWaiter) stop() {}

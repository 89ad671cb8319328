package executor

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// The pacer's send-lag arithmetic, read on a stepClock that moves a known step on every
// reading, so each lag is exact. (The pacer took its t0 on the first reading.)
func TestPacerSendLagOnItsClock(t *testing.T) {
	start := time.Unix(1000, 0)
	// sent sends r on a fresh pacer whose clock steps by step, and returns what the
	// request's goroutine was handed.
	sent := func(step, at time.Duration) (paced, *pacer) {
		var wg sync.WaitGroup
		got := make(chan paced, 1)
		p := newPacer(context.Background(), &stepClock{now: start, step: step}, 1, &wg, func(r paced) { got <- r })
		defer p.stop()
		if !p.send(paced{n: 3, at: at}) {
			t.Fatal("send refused")
		}
		wg.Wait()
		return <-got, p
	}

	t.Run("due exactly now: sent at once, lag from the next reading", func(t *testing.T) {
		// t0 = 1s; send reads 2s: due at 1s is d = 0, not early; the lag reading is 3s.
		r, _ := sent(time.Second, time.Second)
		if !r.timed || r.early != nil || r.lag != time.Second || r.n != 3 || r.at != time.Second {
			t.Fatalf("handed %+v, want timed, not early, lag 1s", r)
		}
	})
	t.Run("late: lag is how far past its time", func(t *testing.T) {
		r, _ := sent(time.Second, 0)
		if r.early != nil || r.lag != 2*time.Second {
			t.Fatalf("handed %+v, want lag 2s", r)
		}
	})
	t.Run("early within the precise tail: handed over to wait out the rest", func(t *testing.T) {
		// t0 = 1ms; send reads 2ms: due at 2ms is d = 1ms ahead, under preciseTail.
		r, p := sent(time.Millisecond, 2*time.Millisecond)
		if r.early != p || r.lag != 0 {
			t.Fatalf("handed %+v, want early (this pacer), no lag yet", r)
		}
		// until reads 3ms, 4ms, ...: at 3ms the request (due at 2ms after t0 = 1ms) is on time.
		if late := p.until(2 * time.Millisecond); late != 0 {
			t.Fatalf("until: late %v, want 0 (the reading that meets the schedule)", late)
		}
	})
	t.Run("until returns the first reading at or past the schedule", func(t *testing.T) {
		var wg sync.WaitGroup
		p := newPacer(context.Background(), &stepClock{now: start, step: 3 * time.Millisecond}, 0, &wg, func(paced) {})
		defer p.stop()
		// t0 = 3ms; readings at 6ms (3ms after t0: 2ms early), 9ms (6ms: 1ms late).
		if late := p.until(5 * time.Millisecond); late != time.Millisecond {
			t.Fatalf("until: late %v, want 1ms", late)
		}
	})
}

// dueBackend builds each request for longer the earlier it is in its run (request n
// takes (10 − n) × 50 µs), then waits for its time and takes its start stamp through
// Request.Due, as the timing core does.
type dueBackend struct {
	fakeBackend
	clk backends.Clock
}

func (d *dueBackend) CallsDue() {}

func (d *dueBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	n, _ := strconv.Atoi(req.ID[strings.LastIndex(req.ID, "req")+3:])
	for build := time.Now().Add(time.Duration(10-n) * 50 * time.Microsecond); time.Now().Before(build); {
	}
	if req.Due == nil {
		panic("a paced request without Due")
	}
	return backends.Sample{ID: req.ID, Start: req.Due(d.clk), FirstToken: time.Microsecond, End: time.Microsecond, OutputTokens: 1}
}

// A burst goes out in its trace's order, whichever request is built first: ten rows due
// at the same instant, the first built last (each on its own goroutine, which alone
// would stamp them in about the order they were built, or at random).
func TestBurstGoesOutInOrder(t *testing.T) {
	trace := func(ctx context.Context, rows chan<- TraceRow) error {
		for i := range 10 {
			rows <- TraceRow{At: 10 * time.Millisecond, Shape: Shape{PromptTokens: i}}
		}
		return nil
	}
	// A clock that moves 1 µs a reading: a request starved of the CPU on this loaded
	// machine does not run out orderWait while the others wait for it.
	clk := &stepClock{now: time.Unix(1000, 0), step: time.Microsecond}
	lv := LevelSpec{Requests: 10, RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}
	res := RunLevel(context.Background(), &dueBackend{clk: clk}, lv, Options{Clock: clk})
	s := res.Runs[0].Samples
	if len(s) != 10 {
		t.Fatalf("%d requests went out", len(s))
	}
	slices.SortFunc(s, func(a, b backends.Sample) int { return a.Start.Compare(b.Start) })
	var order []string
	for _, x := range s {
		order = append(order, x.ID)
	}
	for i, id := range order {
		if !strings.HasSuffix(id, "/req"+strconv.Itoa(i)) {
			t.Fatalf("requests started in the order %v", order)
		}
	}
}

// BenchmarkPacedSend is the executor's send path for one paced request, open loop at a
// rate no schedule waits on, against a backend that returns at once: what each request
// allocates before the timing core (its id, its prompt, its goroutine, its Due).
func BenchmarkPacedSend(b *testing.B) {
	lv := LevelSpec{Concurrency: 64, Requests: b.N, RepeatRuns: 1, RequestRate: 1e9, Arrival: "constant",
		Prompts: &Prompts{Words: 8}}
	b.ReportAllocs()
	b.ResetTimer()
	RunLevel(context.Background(), &dueBackend{clk: backends.SystemClock{}}, lv, Options{DropSamples: true})
}

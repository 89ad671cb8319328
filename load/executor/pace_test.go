package executor

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// waitClock moves only when the pacer's dispatcher waits on it: by the stretch it waits,
// or by spinStep for a turn of its spin (Wait(0)). A paced run's stamps and lags read on
// it are then exact, whatever the goroutines' timing.
type waitClock struct {
	mu       sync.Mutex
	now      time.Time
	spinStep time.Duration
}

func (c *waitClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *waitClock) Wait(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d == 0 {
		d = c.spinStep
	}
	c.now = c.now.Add(d)
}

// The lag a sender records is its reading of the pacer's clock, once its gate opens,
// less its schedule; the stamp is read on the clock the timing core passes; the request
// counts as stamped, and its gate goes back for reuse.
func TestOnTimeLagArithmetic(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name     string
		now, lag time.Duration
	}{
		{"on time", 5 * time.Millisecond, 0},
		{"late", 7 * time.Millisecond, 2 * time.Millisecond},
		{"late by a nanosecond", 5*time.Millisecond + 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &waitClock{now: t0.Add(tc.now)}
			p := &pacer{clk: clk, t0: t0, free: make(chan *gate, 1)}
			p.stamped.Store(6)
			g := newGate()
			g.at, g.seq, g.opened = 5*time.Millisecond, 7, true
			s := &sender{p: p, r: paced{at: 5 * time.Millisecond, gate: g}}
			core := &waitClock{now: time.Unix(2000, 0)}
			if got := s.onTime(core); !got.Equal(core.now) {
				t.Fatalf("stamp %v, want the core clock's %v", got, core.now)
			}
			if s.lag != tc.lag {
				t.Fatalf("lag %v, want %v", s.lag, tc.lag)
			}
			if n := p.stamped.Load(); n != 7 {
				t.Fatalf("stamped %d, want 7", n)
			}
			if got := <-p.free; got != g {
				t.Fatal("the gate did not go back for reuse")
			}
			// No stamp clock: no stamp, the same lag.
			g.opened = true
			if got := s.onTime(nil); !got.IsZero() || s.lag != tc.lag {
				t.Fatalf("without a stamp clock: stamp %v, lag %v", got, s.lag)
			}
		})
	}
}

// The dispatcher waits out a request's time on the runtime timer down to preciseTail,
// in nanosleeps of at most preciseStep down to spinTail, and spins only for the rest:
// at most spinTail of a core a request. until returns how late it is then.
func TestUntilSpinsOnlyItsLastStretch(t *testing.T) {
	for _, tc := range []struct {
		name           string
		at, step, late time.Duration
		sleeps, spins  int
	}{
		// 10 ms: one sleep to 1.5 ms, naps to 100 µs, 100 spins of 1 µs onto the time.
		{"from afar", 10 * time.Millisecond, time.Microsecond, 0, 1, 100},
		// 3 µs spins from 100 µs: 34 of them, 2 µs past.
		{"coarse spin", 10 * time.Millisecond, 3 * time.Microsecond, 2 * time.Microsecond, 1, 34},
		{"within the tail", 1200 * time.Microsecond, time.Microsecond, 0, 0, 100},
		{"within the spin", 30 * time.Microsecond, time.Microsecond, 0, 0, 30},
		{"already late", -2 * time.Millisecond, time.Microsecond, 2 * time.Millisecond, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &waitClock{now: time.Unix(1000, 0), spinStep: tc.step}
			p := &pacer{clk: clk, t0: clk.Now()}
			var sleeps, spins int
			left := func() time.Duration { return tc.at - p.since() }
			p.wait = waiter{
				sleep: func(d time.Duration) {
					if l := left(); l <= preciseTail || d != l-preciseTail {
						t.Fatalf("slept %v with %v left", d, l)
					}
					sleeps++
					clk.Wait(d)
				},
				nap: func(d time.Duration) {
					if l := left(); l <= spinTail || l > preciseTail || d > preciseStep || d > l-spinTail || d <= 0 {
						t.Fatalf("napped %v with %v left", d, l)
					}
					clk.Wait(d)
				},
				spin: func() {
					if l := left(); l > spinTail || l <= 0 {
						t.Fatalf("spun with %v left", l)
					}
					spins++
					clk.Wait(0)
				},
			}
			if late := p.until(tc.at); late != tc.late || sleeps != tc.sleeps || spins != tc.spins {
				t.Fatalf("late %v after %d sleeps and %d spins; want %v, %d, %d", late, sleeps, spins, tc.late, tc.sleeps, tc.spins)
			}
			if time.Duration(spins)*tc.step > spinTail+tc.step {
				t.Fatalf("spun %v, more than spinTail", time.Duration(spins)*tc.step)
			}
		})
	}
}

// dueBackend builds each request for longer the earlier it is in its burst of ten
// (request n takes (10 − n mod 10) × 50 µs), then waits for its time and takes its start
// stamp through Request.Due, as the timing core does, noting the order of the stamps.
type dueBackend struct {
	fakeBackend
	clk     backends.Clock
	stamped []string
	// holdWrote holds request n's Wrote until request holdWrote[n] has stamped (its
	// channel in stamps closes); events logs "stamp n" and "wrote n" as they happen.
	holdWrote map[int]int
	stamps    map[int]chan struct{}
	events    []string
	// holdFor bounds a held Wrote's wait in real time (0: a second); late moves the
	// clock (a *waitClock) on by late[n] before request n takes its stamp, as if its
	// build had taken that long (once request n-1 has stamped, where stamps has it).
	holdFor time.Duration
	late    map[int]time.Duration
}

func (d *dueBackend) log(e string) {
	d.mu.Lock()
	d.events = append(d.events, e)
	d.mu.Unlock()
}

func (d *dueBackend) CallsDue() {}

func (d *dueBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	n, _ := strconv.Atoi(req.ID[strings.LastIndex(req.ID, "req")+3:])
	for build := time.Now().Add(time.Duration(10-n%10) * 50 * time.Microsecond); time.Now().Before(build); {
	}
	if req.Due == nil {
		panic("a paced request without Due")
	}
	if l, ok := d.late[n]; ok {
		if ch, ok := d.stamps[n-1]; ok {
			<-ch
		}
		d.clk.(*waitClock).Wait(l)
	}
	start := req.Due(stampNoter{d, req.ID})
	if ch, ok := d.stamps[n]; ok {
		close(ch)
	}
	if m, ok := d.holdWrote[n]; ok {
		hold := d.holdFor
		if hold == 0 {
			hold = time.Second
		}
		select {
		case <-d.stamps[m]:
		case <-time.After(hold): // the pacer waits for this write first
		}
	}
	d.log("wrote " + strconv.Itoa(n))
	req.Wrote()
	return backends.Sample{ID: req.ID, Start: start, FirstToken: time.Microsecond, End: time.Microsecond, OutputTokens: 1}
}

// stampNoter is the clock a dueBackend stamps on: it notes the request as it reads.
type stampNoter struct {
	d  *dueBackend
	id string
}

func (n stampNoter) Now() time.Time {
	n.d.mu.Lock()
	n.d.stamped = append(n.d.stamped, n.id)
	n.d.events = append(n.d.events, "stamp "+n.id[strings.LastIndex(n.id, "req")+3:])
	n.d.mu.Unlock()
	return n.d.clk.Now()
}

// Bursts go out in their trace's order, whichever request is built first: three bursts
// of ten rows within 2.9 ms, 30 ms apart, the first of each built last (each on a
// sender of its own, which alone would stamp them in about the order they were built).
// On a clock that moves as the dispatcher waits, each is stamped exactly at its time
// (from the schedule's start, startLead after the pacer's).
func TestBurstsGoOutInTraceOrder(t *testing.T) {
	var ats []time.Duration
	for b := range 3 {
		for i := range 10 {
			ats = append(ats, time.Duration(b)*30*time.Millisecond+time.Duration(i)*290*time.Microsecond)
		}
	}
	trace := func(ctx context.Context, rows chan<- TraceRow) error {
		for i, at := range ats {
			rows <- TraceRow{At: at, Shape: Shape{PromptTokens: i}}
		}
		return nil
	}
	t0 := time.Unix(1000, 0)
	clk := &waitClock{now: t0, spinStep: time.Microsecond}
	lv := LevelSpec{Requests: len(ats), RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}
	b := &dueBackend{clk: clk}
	lags := &sendLags{}
	res := RunLevel(context.Background(), b, lv, Options{Clock: clk, OnRequest: lags.add})
	if len(b.stamped) != len(ats) {
		t.Fatalf("%d requests went out, want %d", len(b.stamped), len(ats))
	}
	for i, id := range b.stamped {
		if !strings.HasSuffix(id, "/req"+strconv.Itoa(i)) {
			t.Fatalf("requests stamped in the order %v", b.stamped)
		}
	}
	got := lags.byIndex()
	for _, s := range res.Runs[0].Samples {
		n, _ := strconv.Atoi(s.ID[strings.LastIndex(s.ID, "req")+3:])
		if want := t0.Add(startLead + ats[n]); !s.Start.Equal(want) || got[n] != 0 {
			t.Fatalf("request %d stamped %v with lag %v, want %v and 0", n, s.Start.Sub(t0), got[n], startLead+ats[n])
		}
	}
}

// A request due later than the one before it waits until that one has gone out
// (Request.Wrote), so the server sees them in order; rows due at one instant only stamp
// in order and do not queue on each other's writes.
func TestLaterRowWaitsForTheWrite(t *testing.T) {
	ats := []time.Duration{time.Millisecond, time.Millisecond, 2 * time.Millisecond}
	trace := func(ctx context.Context, rows chan<- TraceRow) error {
		for _, at := range ats {
			rows <- TraceRow{At: at}
		}
		return nil
	}
	clk := &waitClock{now: time.Unix(1000, 0), spinStep: time.Microsecond}
	// Row 0 goes out only once row 1 has stamped.
	b := &dueBackend{clk: clk, holdWrote: map[int]int{0: 1}, stamps: map[int]chan struct{}{1: make(chan struct{})}}
	lv := LevelSpec{RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}
	RunLevel(context.Background(), b, lv, Options{Clock: clk})
	pos := map[string]int{}
	for i, e := range b.events {
		pos[e] = i
	}
	if len(pos) != 6 {
		t.Fatalf("events %v", b.events)
	}
	if pos["stamp 1"] > pos["wrote 0"] {
		t.Fatalf("row 1, due with row 0, waited for its write: %v", b.events)
	}
	if pos["stamp 2"] < pos["wrote 1"] || pos["stamp 2"] < pos["wrote 0"] {
		t.Fatalf("row 2 went before the rows due earlier had gone out: %v", b.events)
	}
}

// A request due later than the one before it waits for that one to go out past
// orderGrace (250 µs), up to writeGrace (2 ms) past its own time; later than that it
// goes: row 1 is found (its build took long on the pacer's clock) 0.5 ms, 2 ms or 2.25 ms
// past its time, while row 0's write is held until row 1 has stamped (or, in real
// time, 100 ms).
func TestLaterRowWaitsForTheWriteUpToWriteGrace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		late  time.Duration
		waits bool
	}{
		{"past orderGrace", 500 * time.Microsecond, true},
		{"at writeGrace", 2 * time.Millisecond, true},
		{"past writeGrace", 2250 * time.Microsecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ats := []time.Duration{0, time.Millisecond}
			trace := func(ctx context.Context, rows chan<- TraceRow) error {
				for _, at := range ats {
					rows <- TraceRow{At: at}
				}
				return nil
			}
			clk := &waitClock{now: time.Unix(1000, 0), spinStep: time.Microsecond}
			b := &dueBackend{clk: clk, holdWrote: map[int]int{0: 1}, stamps: map[int]chan struct{}{0: make(chan struct{}), 1: make(chan struct{})},
				holdFor: 100 * time.Millisecond, late: map[int]time.Duration{1: time.Millisecond + tc.late}}
			lv := LevelSpec{RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}
			lags := &sendLags{}
			RunLevel(context.Background(), b, lv, Options{Clock: clk, OnRequest: lags.add})
			pos := map[string]int{}
			for i, e := range b.events {
				pos[e] = i
			}
			if len(pos) != 4 {
				t.Fatalf("events %v", b.events)
			}
			if waited := pos["wrote 0"] < pos["stamp 1"]; waited != tc.waits {
				t.Fatalf("row 1, %v late, waited for row 0's write: %v, want %v (%v)", tc.late, waited, tc.waits, b.events)
			}
			if got := lags.byIndex(); got[1] != tc.late {
				t.Fatalf("row 1's lag %v, want %v", got[1], tc.late)
			}
		})
	}
}

// The dispatcher waits for its turn off the CPU: in pauses of turnStep, never a spin,
// even with its request's time within spinTail or past it, until the request before has
// stamped and (due earlier) gone out; past the grace it stops waiting. Each case starts
// with g 50 µs from its time (inside spinTail), the one before it (seq 1, due 100 µs
// earlier) not yet stamped or not yet written; the pause lets it catch up after three
// pauses, or moves the clock on so the grace runs out.
func TestAwaitTurnWaitsOffTheCPU(t *testing.T) {
	for _, tc := range []struct {
		name             string
		stamped, written uint64
		catchUp          bool // the third pause lets the one before catch up; else each moves the clock 100 µs
		pauses           int
		until            time.Duration // where the clock ends, from the pacer's start
	}{
		{"waits for the stamp", 0, 0, true, 3, 950 * time.Microsecond},
		{"waits for the write", 1, 0, true, 3, 950 * time.Microsecond},
		// The clock starts 50 µs before g's time (1 ms); orderGrace ends 250 µs past it.
		{"stamp grace runs out", 0, 0, false, 4, 1350 * time.Microsecond},
		{"write grace runs out", 1, 0, false, 21, 3050 * time.Microsecond},
		{"nothing to wait for", 1, 1, false, 0, 950 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &waitClock{now: time.Unix(1000, 0), spinStep: time.Microsecond}
			p := &pacer{clk: clk, t0: clk.Now()}
			p.writes.Store(true)
			p.stamped.Store(tc.stamped)
			p.written.Store(tc.written)
			clk.Wait(950 * time.Microsecond)
			pauses := 0
			p.wait = waiter{
				pause: func(d time.Duration) {
					if d != turnStep {
						t.Fatalf("paused %v, want turnStep", d)
					}
					pauses++
					if !tc.catchUp {
						clk.Wait(100 * time.Microsecond)
					} else if pauses == 3 {
						p.stamped.Store(1)
						p.written.Store(1)
					}
				},
				spin:  func() { t.Fatal("spun waiting for its turn") },
				sleep: func(time.Duration) { t.Fatal("slept on the runtime timer waiting for its turn") },
				nap:   func(time.Duration) { t.Fatal("napped waiting for its turn") },
			}
			p.awaitTurn(&gate{at: time.Millisecond, seq: 2}, 900*time.Microsecond)
			if pauses != tc.pauses || p.since() != tc.until {
				t.Fatalf("%d pauses, clock at %v; want %d, %v", pauses, p.since(), tc.pauses, tc.until)
			}
		})
	}
}

// The pacer's own path (hand over, queue, wait, open, stamp, reuse) allocates nothing a
// request once its senders and gates exist: a schedule no one waits on, a do that only
// takes its stamp.
func BenchmarkPacerDispatch(b *testing.B) {
	var wg sync.WaitGroup
	clk := backends.SystemClock{}
	p := newPacer(context.Background(), clk, time.Time{}, 64, &wg, func(r paced) { r.sender.due(clk) })
	for range 2 * queued { // warm: senders and gates
		p.send(paced{})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p.send(paced{})
	}
	p.stop()
	wg.Wait()
}

// dueNow takes each request's start stamp through Request.Due at once, as the timing core
// does once it has built the request's bytes.
type dueNow struct {
	fakeBackend
	clk backends.Clock
}

func (d *dueNow) CallsDue() {}

func (d *dueNow) Do(ctx context.Context, req backends.Request) backends.Sample {
	start := req.Due(d.clk)
	req.Wrote()
	return backends.Sample{ID: req.ID, Start: start, OutputTokens: 1}
}

// BenchmarkPacedSend is the executor's send path for one paced request, open loop at a
// rate no schedule waits on, against a backend that returns at once: what each request
// allocates before the timing core (its id and its prompt; the pacer's own part is
// BenchmarkPacerDispatch's).
func BenchmarkPacedSend(b *testing.B) {
	lv := LevelSpec{Concurrency: 64, Requests: b.N, RepeatRuns: 1, RequestRate: 1e9, Arrival: "constant",
		Prompts: &Prompts{Words: 8}}
	b.ReportAllocs()
	b.ResetTimer()
	RunLevel(context.Background(), &dueNow{clk: backends.SystemClock{}}, lv, Options{DropSamples: true})
}

// The feeder hands each request over buildAhead before its time, on the pacer's clock:
// rows further apart than that wait (hold) until then, once the dispatcher has let the
// one before go, and a row due within buildAhead of the clock goes at once. Each is then stamped at
// its time.
func TestFeederHandsOverBuildAheadBeforeTheTime(t *testing.T) {
	ats := []time.Duration{0, 10 * time.Millisecond, 25 * time.Millisecond, 25 * time.Millisecond, 40 * time.Millisecond}
	clk := &waitClock{now: time.Unix(1000, 0), spinStep: time.Microsecond}
	var mu sync.Mutex
	lags := map[int]time.Duration{}
	var wg sync.WaitGroup
	p := newPacer(context.Background(), clk, time.Time{}, 0, &wg, func(r paced) {
		r.sender.due(nil)
		mu.Lock()
		lags[r.n] = r.sender.lag
		mu.Unlock()
	})
	hold := p.wait.hold
	var handed []string
	p.wait.hold = func(ctx context.Context, d time.Duration) bool {
		if d <= 0 {
			t.Errorf("held %v", d)
		}
		ok := hold(ctx, d)
		handed = append(handed, strconv.Itoa(int(p.sent))+"@"+p.since().String())
		return ok
	}
	for n, at := range ats {
		if !p.send(paced{n: n, at: at}) {
			t.Fatalf("request %d not handed over", n)
		}
	}
	p.stop()
	wg.Wait()
	// Requests 1, 2 and 4 wait (after 0, 1 and 3 had gone: p.sent); 3, due with 2, is
	// handed over at once.
	if want := []string{"1@7ms", "2@22ms", "4@37ms"}; !slices.Equal(handed, want) {
		t.Fatalf("hand-overs after holds %v, want %v", handed, want)
	}
	for n := range ats {
		if lags[n] != 0 {
			t.Fatalf("lags %v, want all 0", lags)
		}
	}
}

// The feeder's waits end when the run's context does: send hands nothing over then.
func TestFeederHoldEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		clk  backends.Clock
	}{{"runtime timer", backends.SystemClock{}}, {"wait clock", &waitClock{now: time.Unix(1000, 0)}}} {
		t.Run(tc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			handed := 0
			p := newPacer(ctx, tc.clk, time.Time{}, 0, &wg, func(paced) { handed++ })
			if p.send(paced{at: time.Hour}) {
				t.Fatal("send handed a request over after the context ended")
			}
			if p.wait.hold(ctx, time.Hour) {
				t.Fatal("hold returned true after the context ended")
			}
			p.stop()
			wg.Wait()
			if handed != 0 || p.sent != 0 {
				t.Fatalf("%d requests handed over, %d numbered", handed, p.sent)
			}
		})
	}
	// A hold whose context lives waits its time and says so.
	var wg sync.WaitGroup
	p := newPacer(context.Background(), backends.SystemClock{}, time.Time{}, 0, &wg, func(paced) {})
	if !p.wait.hold(context.Background(), time.Nanosecond) {
		t.Fatal("a live hold returned false")
	}
	p.stop()
	wg.Wait()
}

// fakeGC stands in for the runtime's collector settings.
type fakeGC struct {
	mu      sync.Mutex
	percent int
	limit   int64
}

func (f *fakeGC) knobs() gcKnobs {
	return gcKnobs{
		percent: func(p int) int { f.mu.Lock(); defer f.mu.Unlock(); old := f.percent; f.percent = p; return old },
		limit: func(l int64) int64 {
			f.mu.Lock()
			defer f.mu.Unlock()
			old := f.limit
			if l >= 0 {
				f.limit = l
			}
			return old
		},
		used: func() int64 { return 100 << 20 },
	}
}

func (f *fakeGC) now() (int, int64) { f.mu.Lock(); defer f.mu.Unlock(); return f.percent, f.limit }

// While a paced run sends, the collector is off up to gcBudget past the memory used when
// it began; once its dispatcher is done (and the last of overlapping runs), the settings
// are back. A limit set lower stays, and GOGC=off keeps its own limit.
func TestPacedRunHoldsTheCollectorOff(t *testing.T) {
	const noLimit = int64(1<<63 - 1)
	for _, tc := range []struct {
		name             string
		percent          int
		limit, heldLimit int64
	}{
		{"defaults", 100, noLimit, 100<<20 + gcBudget},
		{"GOGC=0", 0, noLimit, 100<<20 + gcBudget},
		{"a lower limit", 50, 300 << 20, 300 << 20},
		{"GOGC=off", -1, noLimit, noLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGC{percent: tc.percent, limit: tc.limit}
			saved := gc
			gc = f.knobs()
			defer func() { gc = saved }()
			var wg sync.WaitGroup
			clk := &waitClock{now: time.Unix(1000, 0), spinStep: time.Microsecond}
			var during [][2]int64
			var mu sync.Mutex
			p := newPacer(context.Background(), clk, time.Time{}, 0, &wg, func(r paced) {
				r.sender.due(nil)
				pc, l := f.now()
				mu.Lock()
				during = append(during, [2]int64{int64(pc), l})
				mu.Unlock()
			})
			// A second run overlapping the first: its end must not put the collector back.
			release := holdGC()
			for n, at := range []time.Duration{0, 10 * time.Millisecond} {
				p.send(paced{n: n, at: at})
			}
			p.stop()
			wg.Wait()
			for _, d := range during {
				if d != [2]int64{-1, tc.heldLimit} {
					t.Fatalf("a request went out with the collector at %d%% under limit %d, want off under %d", d[0], d[1], tc.heldLimit)
				}
			}
			if pc, l := f.now(); pc != -1 || l != tc.heldLimit {
				t.Fatalf("with another run still sending: %d%%, limit %d", pc, l)
			}
			release()
			release() // once only
			if pc, l := f.now(); pc != tc.percent || l != tc.limit {
				t.Fatalf("after the runs: %d%%, limit %d; want %d%%, %d back", pc, l, tc.percent, tc.limit)
			}
			if len(during) != 2 {
				t.Fatalf("%d requests sent", len(during))
			}
		})
	}
}

// The memory a limit counts is what the runtime holds from the OS less what it gave back.
func TestMemoryUsed(t *testing.T) {
	used := memoryUsed()
	var m runtime.MemStats
	runtime.ReadMemStats(&m) // after: Sys only grows
	if used <= 0 || used > int64(m.Sys) {
		t.Fatalf("memory used %d, want within (0, %d]", used, m.Sys)
	}
}

// A paced run alone (no other holding the collector) turns it off under its limit, and
// its release puts the settings back.
func TestHoldGCAlone(t *testing.T) {
	f := &fakeGC{percent: 100, limit: 1<<63 - 1}
	saved := gc
	gc = f.knobs()
	defer func() { gc = saved }()
	release := holdGC()
	if pc, l := f.now(); pc != -1 || l != 100<<20+gcBudget {
		t.Fatalf("held alone: %d%%, limit %d; want off under %d", pc, l, 100<<20+gcBudget)
	}
	release()
	if pc, l := f.now(); pc != 100 || l != 1<<63-1 {
		t.Fatalf("released: %d%%, limit %d; want the settings back", pc, l)
	}
}

// readClock is a clock that says when it has first been read, and moves only when the
// test sets it.
type readClock struct {
	mu   sync.Mutex
	now  time.Time
	read chan struct{}
}

func (c *readClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.read:
	default:
		close(c.read)
	}
	return c.now
}

func (c *readClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// A test clock's hold waits first for the requests handed over to take their stamps, and
// then only what is left of its stretch: nothing when the clock has reached its end.
func TestClockHoldWaitsWhatIsLeft(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moved time.Duration // how far the clock moves while the hold waits for the stamp
		waits []time.Duration
	}{
		{"clock unmoved", 0, []time.Duration{5 * time.Millisecond}},
		{"clock moved part of it", 3 * time.Millisecond, []time.Duration{2 * time.Millisecond}},
		{"clock at its end", 5 * time.Millisecond, nil},
		{"clock past its end", 6 * time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			clk := &readClock{now: t0, read: make(chan struct{})}
			p := &pacer{clk: clk, t0: t0, sent: 1}
			var waits []time.Duration
			hold := p.clockHold(func(d time.Duration) { waits = append(waits, d) })
			done := make(chan bool)
			go func() { done <- hold(context.Background(), 5*time.Millisecond) }()
			<-clk.read // the hold has read the clock: its stretch ends at 5 ms
			select {
			case <-done:
				t.Fatal("the hold returned before the request handed over had stamped")
			case <-time.After(time.Millisecond):
			}
			clk.set(t0.Add(tc.moved))
			p.stamped.Store(1)
			if !<-done {
				t.Fatal("a live hold returned false")
			}
			if !slices.Equal(waits, tc.waits) {
				t.Fatalf("waited %v, want %v", waits, tc.waits)
			}
		})
	}
}

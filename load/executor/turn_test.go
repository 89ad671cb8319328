package executor

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// turnBackend is a DueCaller whose Do hands its request's first write to req.Turn, as
// the timing core does for a connection that holds it. waitFor[n] makes request n hand
// its write over only once request waitFor[n] has left its own at its gate (so they
// reach the pacer out of order). sleep[n] makes request n wait that long in real time
// first. sent logs each write as it is made: its number, its stamp, and whether the
// pacer made it.
type turnBackend struct {
	fakeBackend
	waitFor map[int]int
	sleep   map[int]time.Duration

	smu   sync.Mutex
	gates map[int]*gate
	sent  []turnWrite
}

type turnWrite struct {
	n       int
	stamp   time.Time
	byPacer bool
}

// turnSend is one request's held write.
type turnSend struct {
	b *turnBackend
	n int
	g *gate
}

// SendAt logs the write, and whether the pacer makes it (it does while the write is
// left at the gate; a request that finds its gate open makes its own).
func (s turnSend) SendAt(start time.Time) {
	s.g.mu.Lock()
	byPacer := s.g.send != nil
	s.g.mu.Unlock()
	s.b.smu.Lock()
	s.b.sent = append(s.b.sent, turnWrite{s.n, start, byPacer})
	s.b.smu.Unlock()
}

// missed says that some write was not left at its gate in time, so the pacer did not
// make it.
func (b *turnBackend) missed() bool {
	for _, w := range b.sent {
		if !w.byPacer {
			return true
		}
	}
	return false
}

func (b *turnBackend) CallsDue() {}

// leftAt says that request m's write waits at its gate, or has been made.
func (b *turnBackend) leftAt(m int) bool {
	b.smu.Lock()
	g := b.gates[m]
	made := false
	for _, w := range b.sent {
		made = made || w.n == m
	}
	b.smu.Unlock()
	if made {
		return true
	}
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.send != nil
}

func (b *turnBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	n, _ := strconv.Atoi(req.ID[strings.LastIndex(req.ID, "req")+3:])
	if req.Turn == nil || req.Due == nil {
		panic("a paced request without Turn and Due")
	}
	g := req.Turn.(*sender).r.gate
	b.smu.Lock()
	b.gates[n] = g
	b.smu.Unlock()
	if m, ok := b.waitFor[n]; ok {
		for !b.leftAt(m) { // or made: found its gate open, it left nothing there
			time.Sleep(10 * time.Microsecond)
		}
	}
	time.Sleep(b.sleep[n])
	req.Turn.Send(backends.SystemClock{}, turnSend{b, n, g})
	b.smu.Lock()
	defer b.smu.Unlock()
	for _, w := range b.sent {
		if w.n == n {
			req.Wrote()
			return backends.Sample{ID: req.ID, Start: w.stamp, TokenSource: backends.TokensServer, OutputTokens: 1}
		}
	}
	panic("Send returned before the write was made")
}

// The pacer makes each held write itself at the request's time, in the schedule's
// order, even when the requests hand their writes over out of order: rows due 20, 20.5
// and 21 ms in, row 0 handing its write over only after row 1. Each write is made at or
// after its row's time (a send lag of at least 0), none before the one before it.
func TestPacerMakesHeldWritesInOrder(t *testing.T) {
	ats := []time.Duration{20 * time.Millisecond, 20500 * time.Microsecond, 21 * time.Millisecond}
	trace := func(ctx context.Context, rows chan<- TraceRow) error {
		for _, at := range ats {
			rows <- TraceRow{At: at}
		}
		return nil
	}
	// Every row must hand its write over before its time for the run to show anything;
	// on a loaded machine one may not (its 3 ms ahead run out), and the run is tried
	// again.
	var b *turnBackend
	var lags *sendLags
	var before time.Time
	for try := 0; ; try++ {
		b = &turnBackend{waitFor: map[int]int{0: 1}, gates: map[int]*gate{}}
		lags = &sendLags{}
		before = time.Now()
		RunLevel(context.Background(), b, LevelSpec{RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}, Options{OnRequest: lags.add})
		if len(b.sent) == 3 && !b.missed() {
			break
		}
		if try == 9 {
			t.Fatalf("in 10 runs the pacer never made all three writes; the last run's: %v", b.sent)
		}
	}
	if len(b.sent) != 3 {
		t.Fatalf("writes %v, want 3", b.sent)
	}
	got := lags.byIndex()
	for i, w := range b.sent {
		if w.n != i {
			t.Fatalf("writes made in the order %v, want the schedule's", b.sent)
		}
		if i > 0 && !w.stamp.After(b.sent[i-1].stamp) {
			t.Fatalf("write %d stamped %v, not after write %d's %v", i, w.stamp, i-1, b.sent[i-1].stamp)
		}
		// Handed over buildAhead before its time: made then, its lag would be negative.
		if got[i] < 0 {
			t.Fatalf("row %d's lag %v: made before its time", i, got[i])
		}
	}
	if first := b.sent[0].stamp.Sub(before); first < ats[0] {
		t.Fatalf("row 0 stamped %v after the level began, want at least its %v", first, ats[0])
	}
}

// A write handed over after its time (its request slow to build) is made at once by
// the request itself, not left at its gate, and its lag says how late.
func TestHeldWriteAfterItsTimeGoesAtOnce(t *testing.T) {
	trace := func(ctx context.Context, rows chan<- TraceRow) error {
		rows <- TraceRow{At: 0}
		return nil
	}
	const slow = 20 * time.Millisecond
	b := &turnBackend{sleep: map[int]time.Duration{0: slow}, gates: map[int]*gate{}}
	lags := &sendLags{}
	RunLevel(context.Background(), b, LevelSpec{RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}, Options{OnRequest: lags.add})
	if len(b.sent) != 1 || b.sent[0].byPacer {
		t.Fatalf("writes %v, want 1, made by the request itself", b.sent)
	}
	// The request was handed over buildAhead before its time and slept slow.
	if lag := lags.byIndex()[0]; lag < slow-buildAhead {
		t.Fatalf("lag %v, want at least %v", lag, slow-buildAhead)
	}
}

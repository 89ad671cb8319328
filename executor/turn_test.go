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
// the timing core does for a connection that holds it. waitFor[n] makes request n
// hand its write over only once request waitFor[n] has (so they reach the pacer out of
// order); sleep[n] makes request n wait that long in real time first. sent logs each
// write as the pacer makes it: its number, its stamp, and whether request n's Send had
// returned already (it must not have).
type turnBackend struct {
	fakeBackend
	t0      func() time.Time
	waitFor map[int]int
	sleep   map[int]time.Duration
	handed  map[int]chan struct{}

	smu  sync.Mutex
	sent []turnWrite
}

type turnWrite struct {
	n     int
	stamp time.Time
}

// turnSend is one request's held write.
type turnSend struct {
	b *turnBackend
	n int
}

func (s turnSend) SendAt(start time.Time) {
	s.b.smu.Lock()
	s.b.sent = append(s.b.sent, turnWrite{s.n, start})
	s.b.smu.Unlock()
}

func (b *turnBackend) CallsDue() {}

func (b *turnBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	n, _ := strconv.Atoi(req.ID[strings.LastIndex(req.ID, "req")+3:])
	if req.Turn == nil || req.Due == nil {
		panic("a paced request without Turn and Due")
	}
	if m, ok := b.waitFor[n]; ok {
		<-b.handed[m]
		time.Sleep(time.Millisecond) // for m to be waiting in Send
	}
	time.Sleep(b.sleep[n])
	if ch, ok := b.handed[n]; ok {
		close(ch)
	}
	req.Turn.Send(backends.SystemClock{}, turnSend{b, n})
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
	b := &turnBackend{waitFor: map[int]int{0: 1}, handed: map[int]chan struct{}{1: make(chan struct{})}}
	lags := &sendLags{}
	before := time.Now()
	RunLevel(context.Background(), b, LevelSpec{RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}, Options{OnRequest: lags.add})
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
// the request itself, and its lag says how late.
func TestHeldWriteAfterItsTimeGoesAtOnce(t *testing.T) {
	trace := func(ctx context.Context, rows chan<- TraceRow) error {
		rows <- TraceRow{At: 0}
		return nil
	}
	const slow = 20 * time.Millisecond
	b := &turnBackend{sleep: map[int]time.Duration{0: slow}}
	lags := &sendLags{}
	RunLevel(context.Background(), b, LevelSpec{RepeatRuns: 1, Trace: trace, Prompts: &Prompts{Words: 1}}, Options{OnRequest: lags.add})
	if len(b.sent) != 1 {
		t.Fatalf("writes %v, want 1", b.sent)
	}
	// The request was handed over buildAhead before its time and slept slow.
	if lag := lags.byIndex()[0]; lag < slow-buildAhead {
		t.Fatalf("lag %v, want at least %v", lag, slow-buildAhead)
	}
}

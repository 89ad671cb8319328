package executor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// rowsTrace streams n rows, row i at i×gap with output length i+1.
func rowsTrace(n int, gap time.Duration) Trace {
	return func(ctx context.Context, rows chan<- TraceRow) error {
		for i := range n {
			select {
			case rows <- TraceRow{At: time.Duration(i) * gap, Shape: Shape{PromptTokens: 10, MaxTokens: i + 1}}:
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	}
}

func TestReplaySendsEachRowWithItsScheduleAndShape(t *testing.T) {
	var mu sync.Mutex
	events := map[int]Event{}
	outputs := map[int]int{} // Event.Sample is valid only during the call
	lv := LevelSpec{RepeatRuns: 1, Trace: rowsTrace(300, 100*time.Microsecond), Prompts: &Prompts{Words: 1}}
	res := RunLevel(context.Background(), &fakeBackend{}, lv, Options{OnRequest: func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		events[ev.Index], outputs[ev.Index] = ev, ev.Sample.MaxTokens
	}})
	if len(res.Runs) != 1 || len(res.Runs[0].Samples) != 300 || len(events) != 300 || res.Runs[0].Err != nil {
		t.Fatalf("%d runs, %d events, err %v", len(res.Runs), len(events), res.Runs[0].Err)
	}
	for i := range 300 {
		ev := events[i]
		if !ev.Paced || ev.Scheduled != time.Duration(i)*100*time.Microsecond || outputs[i] != i+1 {
			t.Fatalf("request %d: paced %v, scheduled %v, lag %v, output length %d", i, ev.Paced, ev.Scheduled, ev.SendLag, outputs[i])
		}
	}
}

func TestReplayCapShowsAsSendLag(t *testing.T) {
	f := &fakeBackend{delay: 20 * time.Millisecond}
	lags := &sendLags{}
	lv := LevelSpec{Concurrency: 2, RepeatRuns: 1, Trace: rowsTrace(6, time.Millisecond), Prompts: &Prompts{Words: 1}}
	RunLevel(context.Background(), f, lv, Options{OnRequest: lags.add})
	if m := f.maxFlight.Load(); m > 2 || f.calls.Load() != 6 {
		t.Fatalf("%d calls, %d in flight at most; want 6 under the cap 2", f.calls.Load(), m)
	}
	// Rows 1 ms apart behind 2 slots of 20 ms: the last pair waits for two rounds.
	if got := lags.byIndex(); len(got) != 6 || got[5] < 30*time.Millisecond {
		t.Fatalf("send lags %v; the cap should have delayed the last request by about 35ms", got)
	}
}

func TestReplayReportsATraceThatFails(t *testing.T) {
	broken := errors.New("trace.jsonl:3: not a Mooncake row")
	lv := LevelSpec{RepeatRuns: 1, Prompts: &Prompts{Words: 1}, Trace: func(ctx context.Context, rows chan<- TraceRow) error {
		rows <- TraceRow{}
		return broken
	}}
	res := RunLevel(context.Background(), &fakeBackend{}, lv, Options{})
	if len(res.Runs[0].Samples) != 1 || !errors.Is(res.Runs[0].Err, broken) {
		t.Fatalf("%d samples, err %v", len(res.Runs[0].Samples), res.Runs[0].Err)
	}
}

func TestReplayStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeBackend{}
	done := make(chan Result)
	go func() {
		done <- RunLevel(ctx, f, LevelSpec{RepeatRuns: 1, Trace: rowsTrace(1000, time.Hour), Prompts: &Prompts{Words: 1}}, Options{})
	}()
	for f.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if res := <-done; !res.Interrupted || f.calls.Load() != 1 {
		t.Fatalf("interrupted %v after %d requests; want the first row only", res.Interrupted, f.calls.Load())
	}
}

// firstSent closes sent on its first request.
type firstSent struct {
	fakeBackend
	once sync.Once
	sent chan struct{}
}

func (f *firstSent) Do(ctx context.Context, req backends.Request) backends.Sample {
	f.once.Do(func() { close(f.sent) })
	return f.fakeBackend.Do(ctx, req)
}

// A replay's first request waits until the trace's reader has filled its buffer or
// finished: a reader that pauses after its first row (up to 200 ms) sees no request
// go out before it is done.
func TestReplayWaitsForTheReaderBeforeTheFirstRequest(t *testing.T) {
	f := &firstSent{sent: make(chan struct{})}
	early := false
	lv := LevelSpec{RepeatRuns: 1, Prompts: &Prompts{Words: 1}, Trace: func(ctx context.Context, rows chan<- TraceRow) error {
		rows <- TraceRow{}
		select {
		case <-f.sent:
			early = true
		case <-time.After(200 * time.Millisecond):
		}
		rows <- TraceRow{At: time.Millisecond}
		return nil
	}}
	res := RunLevel(context.Background(), f, lv, Options{})
	if len(res.Runs[0].Samples) != 2 || res.Runs[0].Err != nil {
		t.Fatalf("%d samples, err %v", len(res.Runs[0].Samples), res.Runs[0].Err)
	}
	if early {
		t.Fatal("the first request went out while the trace's reader was still reading")
	}
}

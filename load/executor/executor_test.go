package executor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// fakeBackend stands in for a server in load-generation tests: the executor's job is
// scheduling, so what matters is how many requests are in flight and when they start.
type fakeBackend struct {
	delay     time.Duration
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	calls     atomic.Int64
	mu        sync.Mutex
	prompts   []string
	// promptTokens maps a prompt to the server's count; nil reports none.
	promptTokens func(prompt string) int
}

func (f *fakeBackend) Kind() string { return "fake" }
func (f *fakeBackend) Name() string { return "fake.test" }
func (f *fakeBackend) Probe(context.Context, []string) backends.ProbeResult {
	return backends.ProbeResult{}
}

func (f *fakeBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	f.calls.Add(1)
	f.mu.Lock()
	f.prompts = append(f.prompts, req.Prompt)
	f.mu.Unlock()
	s := backends.Sample{ID: req.ID, Start: time.Now()}
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		s.Err = &backends.Error{Class: backends.ErrCanceled, Message: "canceled"}
		s.End = time.Since(s.Start)
		return s
	}
	s.End = time.Since(s.Start)
	s.FirstToken = s.End / 2
	s.Chunks, s.OutputTokens = 1, 1
	if f.promptTokens != nil {
		s.PromptTokens = f.promptTokens(req.Prompt)
		if s.PromptTokens < 0 { // a count below zero stands for vLLM's 400 on a prompt over its context
			s.PromptTokens = 0
			s.Err = &backends.Error{Class: backends.ErrHTTP4xx, Message: "the server rejected the request (400 Bad Request)"}
		}
	}
	return s
}

func TestRunLevelClosedLoop(t *testing.T) {
	f := &fakeBackend{delay: 5 * time.Millisecond}
	var warm, measured atomic.Int64
	lv := LevelSpec{Concurrency: 4, Requests: 12, WarmupRuns: 2, RepeatRuns: 3, Prompts: &Prompts{Words: 3}}
	res := RunLevel(context.Background(), f, lv, Options{OnRequest: func(e Event) {
		if e.Warmup {
			warm.Add(1)
		} else {
			measured.Add(1)
		}
	}})
	if got := f.calls.Load(); got != 5*12 {
		t.Fatalf("calls = %d, want 60", got)
	}
	if warm.Load() != 24 || measured.Load() != 36 {
		t.Fatalf("warm-up %d, measured %d requests; want 24 and 36", warm.Load(), measured.Load())
	}
	if len(res.Runs) != 3 {
		t.Fatalf("measured runs = %d, want 3 (warm-up runs are discarded)", len(res.Runs))
	}
	for _, r := range res.Runs {
		if r.Warmup || len(r.Samples) != 12 || r.Window() <= 0 {
			t.Fatalf("run %d: warmup=%v samples=%d window=%v", r.Index, r.Warmup, len(r.Samples), r.Window())
		}
		// Each request names its slot, 1 to 4, and a slot's requests follow one another.
		bySlot := map[int][]backends.Sample{}
		for _, s := range r.Samples {
			bySlot[s.Slot] = append(bySlot[s.Slot], s)
		}
		for slot, ss := range bySlot {
			if slot < 1 || slot > 4 {
				t.Fatalf("run %d: a request from slot %d of 4", r.Index, slot)
			}
			for i := 1; i < len(ss); i++ {
				if ss[i].Start.Before(ss[i-1].Start.Add(ss[i-1].End)) {
					t.Fatalf("run %d, slot %d: a request started before the slot's last one ended", r.Index, slot)
				}
			}
		}
	}
	if m := f.maxFlight.Load(); m != 4 {
		t.Fatalf("max in flight = %d, want exactly the concurrency 4", m)
	}
	// Every request got its own prefix: no two prompts alike.
	seen := map[string]bool{}
	for _, p := range f.prompts {
		if seen[p] {
			t.Fatalf("prompt repeated across requests: %q", p)
		}
		seen[p] = true
	}
}

func TestSharedPrefixGivesOnePrompt(t *testing.T) {
	f := &fakeBackend{}
	RunLevel(context.Background(), f, LevelSpec{Concurrency: 2, Requests: 4, RepeatRuns: 1, Prompts: &Prompts{Words: 5, Shared: true}}, Options{})
	for _, p := range f.prompts {
		if p != f.prompts[0] {
			t.Fatalf("shared prompts differ: %q vs %q", p, f.prompts[0])
		}
	}
}

func TestOpenLoopCapsInFlightAndRecordsLag(t *testing.T) {
	f := &fakeBackend{delay: 20 * time.Millisecond}
	lv := LevelSpec{Concurrency: 2, Requests: 10, RepeatRuns: 1, RequestRate: 1000, Arrival: "constant", Prompts: &Prompts{Words: 1}}
	lags := &sendLags{}
	RunLevel(context.Background(), f, lv, Options{OnRequest: lags.add})
	sendLag := lags.byIndex()
	if f.calls.Load() != 10 {
		t.Fatalf("calls = %d, want 10", f.calls.Load())
	}
	if m := f.maxFlight.Load(); m > 2 {
		t.Fatalf("max in flight %d exceeds the cap 2", m)
	}
	if n := len(sendLag); n != 10 {
		t.Fatalf("send lags = %d, want one per request", n)
	}
	// With 2 slots of 20 ms each, requests at 1 ms spacing must wait: late sends show.
	if last := sendLag[9]; last < 20*time.Millisecond {
		t.Fatalf("last send lag %v; the cap should have delayed it by at least 20ms", last)
	}
}

func TestScheduleMeanRate(t *testing.T) {
	s := Schedule(50, "poisson", 20001, 42)
	mean := float64(s[len(s)-1]) / float64(len(s)-1)
	want := float64(time.Second) / 50
	if math.Abs(mean-want)/want > 0.03 {
		t.Fatalf("poisson mean gap %v, want %v within 3%%", time.Duration(mean), time.Duration(want))
	}
	if again := Schedule(50, "poisson", 20001, 42); again[777] != s[777] {
		t.Fatal("schedule not repeatable for the same seed")
	}
	c := Schedule(4, "constant", 3, 1)
	if c[0] != 0 || c[1] != 250*time.Millisecond || c[2] != 500*time.Millisecond {
		t.Fatalf("constant schedule %v", c)
	}
	// No rate: every request at once (not at an infinite gap).
	if z := Schedule(0, "poisson", 3, 1); len(z) != 3 || z[1] != 0 || z[2] != 0 {
		t.Fatalf("schedule without a rate %v, want 3 at 0", z)
	}
}

func TestInterruptKeepsMeasuredSamples(t *testing.T) {
	f := &fakeBackend{delay: 30 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int64
	lv := LevelSpec{Concurrency: 2, Requests: 1000, RepeatRuns: 3, Prompts: &Prompts{Words: 1}}
	res := RunLevel(ctx, f, lv, Options{Grace: time.Second, OnRequest: func(Event) {
		if done.Add(1) == 4 {
			cancel()
		}
	}})
	if !res.Interrupted || len(res.Runs) != 1 || !res.Runs[0].Interrupted {
		t.Fatalf("interrupted=%v runs=%d", res.Interrupted, len(res.Runs))
	}
	n := len(res.Runs[0].Samples)
	if n < 4 || n > 6 {
		t.Fatalf("samples after interrupt = %d, want the 4 done plus at most the 2 in flight", n)
	}
	for _, s := range res.Runs[0].Samples {
		if s.Err != nil {
			t.Fatalf("in-flight request should have finished within the grace period, got %v", s.Err)
		}
	}
}

func TestInterruptWithoutGraceCancelsInFlight(t *testing.T) {
	f := &fakeBackend{delay: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for f.inFlight.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	res := RunLevel(ctx, f, LevelSpec{Concurrency: 2, Requests: 4, RepeatRuns: 1, Prompts: &Prompts{Words: 1}}, Options{})
	if len(res.Runs[0].Samples) != 2 {
		t.Fatalf("samples = %d, want the 2 in flight", len(res.Runs[0].Samples))
	}
	for _, s := range res.Runs[0].Samples {
		if s.Err == nil || s.Err.Class != backends.ErrCanceled {
			t.Fatalf("want canceled, got %+v", s.Err)
		}
	}
}

func TestAbortFailsRemainingRequests(t *testing.T) {
	f := &fakeBackend{}
	abort := make(chan struct{})
	close(abort)
	res := RunLevel(context.Background(), f, LevelSpec{Concurrency: 1, Requests: 3, RepeatRuns: 1, Prompts: &Prompts{Words: 1}}, Options{Abort: abort})
	if f.calls.Load() != 0 {
		t.Fatalf("sent %d requests after abort", f.calls.Load())
	}
	for _, s := range res.Runs[0].Samples {
		if s.Err == nil || s.Err.Class != backends.ErrServerDied {
			t.Fatalf("want server_died, got %+v", s.Err)
		}
	}
}

func TestCalibrateMeetsServerCount(t *testing.T) {
	// A server whose tokenizer gives 3 tokens per word plus 11 for prefix and template.
	f := &fakeBackend{promptTokens: func(p string) int { return 3*len(strings.Fields(p)) + 11 - 3 }}
	p := &Prompts{Salt: "x"}
	cal := Calibrate(context.Background(), f, backends.Request{}, p, 128)
	if cal.Actual != 128 && cal.Actual != 127 && cal.Actual != 129 {
		t.Fatalf("calibrated to %d tokens, want 128±1 (%+v)", cal.Actual, cal)
	}
	if got := f.promptTokens(p.For("any")); got != cal.Actual {
		t.Fatalf("prompt now counts %d, calibration said %d", got, cal.Actual)
	}
	if cal.Probes > 8 {
		t.Fatalf("%d probes", cal.Probes)
	}
}

// vLLM rejects (400) a prompt over its context instead of cutting it. On a tokenizer of
// 3 tokens a word, the first guess for 480 tokens (240 words) overruns a 512-token
// context: calibration must step down and still meet the count, not give up on the cell.
func TestCalibrateStepsDownFromARejectedProbe(t *testing.T) {
	count := func(p string) int { return 3*len(strings.Fields(p)) + 8 }
	f := &fakeBackend{promptTokens: func(p string) int {
		if n := count(p); n <= 512 {
			return n
		}
		return -1
	}}
	p := &Prompts{Salt: "x"}
	cal := Calibrate(context.Background(), f, backends.Request{}, p, 480)
	if cal.Actual < 479 || cal.Actual > 481 || cal.Note != "" && !strings.Contains(cal.Note, "closest prompt") {
		t.Fatalf("calibrated to %d tokens, want 480±1: %+v", cal.Actual, cal)
	}
	if got := count(p.For("any")); got != cal.Actual || got > 512 {
		t.Fatalf("prompt now counts %d, calibration said %d", got, cal.Actual)
	}
}

// FitTokens likewise aims lower when a probe is rejected, and fits the line.
func TestFitTokensStepsDownFromARejectedProbe(t *testing.T) {
	var asked []int
	fb := &fakeBackend{promptTokens: func(p string) int {
		// More tokens a word the longer the prompt (a growing share of rare pieces): the
		// first probe, on English's 0.75 words a token, counts 514 and is rejected.
		n := len(strings.Fields(p))
		tokens := 10 + n + n*n/100
		asked = append(asked, tokens)
		if tokens > 512 {
			return -1
		}
		return tokens
	}}
	f := FitTokens(context.Background(), fb, backends.Request{}, &Prompts{Shared: true}, 240, 480)
	if f.TokensPerWord <= 0 || f.Note != "" || asked[0] <= 512 {
		t.Fatalf("fit %+v (probes counted %v): want a line despite the rejected first probe", f, asked)
	}
}

func TestCalibrateWithoutServerCount(t *testing.T) {
	f := &fakeBackend{}
	cal := Calibrate(context.Background(), f, backends.Request{}, &Prompts{}, 100)
	if cal.Actual != 0 || !strings.Contains(cal.Note, "not calibrated") {
		t.Fatalf("%+v", cal)
	}
}

// stepClock moves one step forward on every reading, so what the executor reads from it
// is known exactly.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func TestExecutorReadsTimeFromItsClock(t *testing.T) {
	t.Run("open-loop send lags", func(t *testing.T) {
		// At 1,000 requests/s on a clock that moves only as the pacer waits on it, with
		// spins of 3 µs: each request, the first too (the schedule starts startLead after
		// the pacer does), goes after naps down to 100 µs before its time and 34 spins of
		// 3 µs, 2 µs past it.
		clk := &waitClock{now: time.Unix(1000, 0), spinStep: 3 * time.Microsecond}
		lv := LevelSpec{Concurrency: 1, Requests: 3, RepeatRuns: 1, RequestRate: 1000, Arrival: "constant", Prompts: &Prompts{Words: 1}}
		lags := &sendLags{}
		RunLevel(context.Background(), &fakeBackend{}, lv, Options{Clock: clk, OnRequest: lags.add})
		want := []time.Duration{2 * time.Microsecond, 2 * time.Microsecond, 2 * time.Microsecond}
		if got := lags.byIndex(); !slices.Equal(got, want) {
			t.Fatalf("send lags %v, want %v", got, want)
		}
	})
	t.Run("refused request start", func(t *testing.T) {
		at := time.Unix(2000, 0)
		clk := &stepClock{now: at}
		abort := make(chan struct{})
		close(abort)
		lv := LevelSpec{Concurrency: 1, Requests: 2, RepeatRuns: 1, Prompts: &Prompts{Words: 1}}
		res := RunLevel(context.Background(), &fakeBackend{}, lv, Options{Abort: abort, Clock: clk})
		if n := len(res.Runs[0].Samples); n != 2 {
			t.Fatalf("%d samples, want 2", n)
		}
		for _, s := range res.Runs[0].Samples {
			if !s.Start.Equal(at) {
				t.Fatalf("refused request started at %v, want the clock's %v", s.Start, at)
			}
		}
	})
}

// sendLags collects the send lags the executor reports per request, by request index.
type sendLags struct{ m map[int]time.Duration }

func (l *sendLags) add(ev Event) {
	if l.m == nil {
		l.m = map[int]time.Duration{}
	}
	if ev.Paced {
		l.m[ev.Index] = ev.SendLag
	}
}

func (l *sendLags) byIndex() []time.Duration {
	out := make([]time.Duration, len(l.m))
	for i, d := range l.m {
		out[i] = d
	}
	return out
}

// The workload's seed reaches the open loop's schedule: run i (from 0) draws its Poisson
// gaps from Seed + 7919·i, a warm-up run from the same plus 2³², so runs differ from each
// other and repeat across invocations. Read on a stepping clock: no request waits.
func TestOpenLoopScheduleFollowsTheSeed(t *testing.T) {
	const n, rate, seed = 5, 1000.0, 42
	lv := LevelSpec{Concurrency: n, Requests: n, WarmupRuns: 1, RepeatRuns: 2, RequestRate: rate, Arrival: "poisson", Seed: seed, Prompts: &Prompts{Words: 1}}
	type key struct {
		run  int
		warm bool
	}
	var mu sync.Mutex
	got := map[key][]time.Duration{}
	RunLevel(context.Background(), &fakeBackend{}, lv, Options{Clock: &stepClock{now: time.Unix(1000, 0), step: time.Second}, OnRequest: func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		k := key{ev.Run, ev.Warmup}
		if got[k] == nil {
			got[k] = make([]time.Duration, n)
		}
		got[k][ev.Index] = ev.Scheduled
	}})
	want := map[key][]time.Duration{
		{0, true}:  Schedule(rate, "poisson", n, seed+1<<32),
		{0, false}: Schedule(rate, "poisson", n, seed),
		{1, false}: Schedule(rate, "poisson", n, seed+7919),
	}
	if len(got) != len(want) {
		t.Fatalf("runs seen %v, want %v", got, want)
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("run %d (warm-up %v): scheduled %v, want %v", k.run, k.warm, got[k], w)
		}
	}
	if slices.Equal(want[key{0, false}], want[key{1, false}]) {
		t.Fatal("two seeds gave one schedule: the test could not tell them apart")
	}
}

// A request's id reads as it always has: its kind, run and number.
func TestRequestIDReadsAsBefore(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		idx, n int
	}{{"run", 0, 0}, {"warmup", 3, 12}, {"run", 11, 1234567}} {
		if got, want := requestID(tc.kind, tc.idx, tc.n), fmt.Sprintf("%s%d/req%d", tc.kind, tc.idx, tc.n); got != want {
			t.Errorf("requestID %q, want %q", got, want)
		}
	}
}

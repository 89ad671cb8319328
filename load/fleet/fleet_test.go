package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

// These tests run the agents as goroutines of the test (inProcess): the same Serve
// the planrun binary's agent mode runs, over real TCP connections to the lead,
// against the mock server. apply's tests run them as processes.

// inProcess launches each agent as Serve in a goroutine, with the clock clocks gives
// it (nil: the system's).
type inProcess struct {
	clocks func(i int) backends.Clock
	// started counts the agents started; serve, when set, replaces Serve.
	serve func(ctx context.Context, cfg Config) error
	mu    sync.Mutex
	stops []context.CancelFunc
}

func (l *inProcess) Launch(ctx context.Context, spec Launch, exits chan<- Exit) (*Processes, error) {
	p := &Processes{}
	p.stopAll = func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, s := range l.stops {
			s()
		}
	}
	for i := range spec.N {
		cfg := Config{Lead: spec.Lead, Index: i, Of: spec.N, Token: spec.Token, NewBackend: connect.New, Log: io.Discard}
		if l.clocks != nil {
			cfg.Clock = l.clocks(i)
		}
		actx, cancel := context.WithCancel(context.Background())
		l.mu.Lock()
		l.stops = append(l.stops, cancel)
		l.mu.Unlock()
		serve := Serve
		if l.serve != nil {
			serve = l.serve
		}
		p.running.Add(1)
		go func() {
			defer p.running.Done()
			err := serve(actx, cfg)
			if errors.Is(err, ErrBye) {
				err = nil
			}
			exits <- Exit{Agent: i, Err: err}
		}()
		p.where = append(p.where, "goroutine")
	}
	return p, nil
}

// skewed is a clock Skew ahead of the system's.
type skewed struct{ skew time.Duration }

func (c skewed) Now() time.Time { return time.Now().Add(c.skew) }

// mock serves the mock server in this process and returns the backend config of it.
func mock(t *testing.T, cfg mockserver.Config) backends.Config {
	t.Helper()
	srv := httptest.NewServer(mockserver.New(cfg))
	t.Cleanup(srv.Close)
	return backends.Config{Kind: "openai", Name: "openai.mock", URL: srv.URL + "/v1", Timeouts: backends.Timeouts{Connect: 5 * time.Second}}
}

func startFleet(t *testing.T, n int, l Launcher) *Fleet {
	t.Helper()
	f, err := Start(context.Background(), Options{Agents: n, Launcher: l, LogDir: t.TempDir(), Connect: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// An agent whose clock is 37 ms ahead is measured so, within the bound, and the
// lead moves its records back onto its own clock: every agent's record of a
// level starts after the start instant, as the lead reads it.
func TestFleetRecoversASkewedClock(t *testing.T) {
	const skew = 37 * time.Millisecond
	l := &inProcess{clocks: func(i int) backends.Clock {
		if i == 1 {
			return skewed{skew}
		}
		return nil
	}}
	f := startFleet(t, 3, l)
	for i, info := range f.Agents("c", nil) {
		want := time.Duration(0)
		if i == 1 {
			want = skew
		}
		c := info.ClockStart
		t.Logf("agent %d: offset %v ± %v", i, c.Offset, c.Bound)
		if d := c.Offset - want; d > c.Bound || -d > c.Bound || c.RoundTrips != RoundTrips {
			t.Errorf("agent %d: offset %v ± %v, want %v within its bound", i, c.Offset, c.Bound, want)
		}
	}
	b := mock(t, mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: time.Millisecond})
	p := &executor.Prompts{Words: 4, Salt: "c"}
	if err := f.Assign(context.Background(), b, p, nil, time.Second, "c", "r", "", nil); err != nil {
		t.Fatal(err)
	}
	lv := executor.LevelSpec{Concurrency: 6, Requests: 30, RepeatRuns: 1, Prompts: p,
		Request: backends.Request{Model: "m", MaxTokens: 4}}
	var mu sync.Mutex
	var recs []executor.Event
	before := time.Now()
	res, levels, err := f.RunLevel(context.Background(), lv, executor.Options{OnRequest: func(ev executor.Event) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, ev)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 30 || len(res.Runs) != 1 || res.Interrupted {
		t.Fatalf("%d records, %d runs (interrupted %v)", len(recs), len(res.Runs), res.Interrupted)
	}
	byAgent := map[int]int{}
	for _, ev := range recs {
		if ev.Agent == nil || !ev.OK() {
			t.Fatalf("record %s: agent %v, error %v", ev.ID, ev.Agent, ev.Err)
		}
		byAgent[*ev.Agent]++
		// Corrected, no start precedes the moment the level was asked for, nor follows
		// its end by the skew.
		if ev.Start.Before(before) || ev.Start.After(res.Runs[0].End) {
			t.Errorf("agent %d's %s starts at %v, outside %v..%v", *ev.Agent, ev.ID, ev.Start, before, res.Runs[0].End)
		}
	}
	if byAgent[0] != 10 || byAgent[1] != 10 || byAgent[2] != 10 {
		t.Errorf("requests by agent %v, want 10 each of 30 over 6 slots", byAgent)
	}
	for _, al := range levels {
		if al.Requests != 10 || al.Client == nil || len(al.Loads) != 1 {
			t.Errorf("agent %d's level: %+v", al.Index, al)
		}
	}
	if bound := f.Bound(); bound <= 0 || bound > 50*time.Millisecond {
		t.Errorf("the fleet's bound %v", bound)
	}
}

// An agent that gives up (its backend cannot be built) fails the fleet's cell, named;
// one that never starts fails its connection, named, within the timeout.
func TestFleetNamesAnAgentThatCannotStart(t *testing.T) {
	f := startFleet(t, 2, &inProcess{})
	err := f.Assign(context.Background(), backends.Config{Kind: "nope", Name: "nope.x"}, &executor.Prompts{}, nil, 0, "c", "r", "", nil)
	if err == nil || !strings.Contains(err.Error(), "agent 0") && !strings.Contains(err.Error(), "agent 1") ||
		!strings.Contains(err.Error(), "unknown kind") {
		t.Fatalf("err %v, want an agent named with its backend's error", err)
	}

	silent := &inProcess{serve: func(ctx context.Context, cfg Config) error {
		if cfg.Index == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return Serve(ctx, cfg)
	}}
	_, err = Start(context.Background(), Options{Agents: 2, Launcher: silent, LogDir: t.TempDir(), Connect: time.Second})
	if err == nil || !strings.Contains(err.Error(), "agent 1 (goroutine) did not connect") {
		t.Fatalf("err %v, want agent 1 named as not connecting", err)
	}
}

// A clock that steps forward after the exchange makes its agent miss the start
// instant: the level fails, naming it, and sends nothing from it.
func TestFleetFailsAnAgentThatMissesTheStart(t *testing.T) {
	f := startFleet(t, 2, &inProcess{clocks: func(i int) backends.Clock {
		if i == 1 {
			return &stepping{after: 2 * RoundTrips, by: 10 * time.Second}
		}
		return nil
	}})
	b := mock(t, mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond})
	p := &executor.Prompts{Words: 4}
	if err := f.Assign(context.Background(), b, p, nil, 0, "c", "r", "", nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := f.RunLevel(context.Background(), executor.LevelSpec{Concurrency: 2, Requests: 4, RepeatRuns: 1, Prompts: p,
		Request: backends.Request{Model: "m", MaxTokens: 2}}, executor.Options{})
	if err == nil || !strings.Contains(err.Error(), "agent 1") || !strings.Contains(err.Error(), "missed the start instant") {
		t.Fatalf("err %v, want agent 1 named as missing the start", err)
	}
}

// stepping is the system clock until it has been read after times, then by ahead.
type stepping struct {
	mu    sync.Mutex
	reads int
	after int
	by    time.Duration
}

func (c *stepping) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.reads > c.after {
		return time.Now().Add(c.by)
	}
	return time.Now()
}

// The exchange's arithmetic: a round trip of 10 ms, 4 ms of it in the lead,
// with the agent 37 ms ahead, gives an offset of 37 ms within 3 ms.
func TestExchangeArithmetic(t *testing.T) {
	ms := int64(time.Millisecond)
	// The lead's time 1000 ms: the ping leaves the agent at its 1037 ms, takes 2 ms to
	// arrive (1002), the lead answers at 1006, the pong takes 4 ms (1010), read
	// at the agent's 1047.
	x := Exchange{T1: 1037 * ms, T2: 1002 * ms, T3: 1006 * ms, T4: 1047 * ms}
	if x.Delay() != 6*time.Millisecond {
		t.Errorf("delay %v, want 6 ms", x.Delay())
	}
	e, ok := estimate([]Exchange{{T1: 0, T2: 0, T3: 0, T4: 50 * ms}, x})
	if !ok || e.Bound != 3*time.Millisecond || e.Offset != 38*time.Millisecond {
		t.Fatalf("estimate %s, want 38 ms ± 3 ms (the true 37 ms within it)", e)
	}
	if e.ToLead(e.ToAgent(time.Unix(5, 0))) != time.Unix(5, 0) {
		t.Error("ToAgent and ToLead are not each other's inverse")
	}
	if _, ok := estimate([]Exchange{{T1: 10, T4: 5}}); ok {
		t.Error("a negative delay gave an estimate")
	}
	_ = fmt.Sprint(e)
}

// An agent's self-check over several runs: its CPU over their wall time, the worse lag.
func TestCombineSelfChecks(t *testing.T) {
	a := &selfcheck.Report{Wall: time.Second, CPU: 500 * time.Millisecond, LagP50: 10, LagP99: 100, LagMax: 200, Cores: 2, Schedules: 5}
	b := &selfcheck.Report{Wall: 3 * time.Second, CPU: 500 * time.Millisecond, LagP50: 20, LagP99: 50, LagMax: 300, Cores: 2, Schedules: 7}
	c := combine(combine(nil, a), b)
	if c.CPUPercent != 25 || c.LagP50 != 20 || c.LagP99 != 100 || c.LagMax != 300 || c.Schedules != 12 || c.Cores != 2 {
		t.Fatalf("combined %+v", c)
	}
	if combine(nil, nil) != nil || combine(a, nil) != a {
		t.Error("combine of none is not the other")
	}
}

// An agent of another planrun build is refused, named with both versions: one binary
// must split, time and record the requests.
func TestFleetRefusesAnotherBuild(t *testing.T) {
	other := &inProcess{serve: func(ctx context.Context, cfg Config) error {
		nc, err := net.Dial("tcp", cfg.Lead)
		if err != nil {
			return err
		}
		defer nc.Close()
		c := newConn(nc)
		c.send(kindHello, hello{Index: cfg.Index, Of: cfg.Of, Token: cfg.Token, Host: "old", PID: 1, Version: "v0.0.1-other"})
		c.read()
		<-ctx.Done()
		return nil
	}}
	_, err := Start(context.Background(), Options{Agents: 1, Launcher: other, LogDir: t.TempDir(), Connect: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "agent 0 (pid 1 on old) runs planrun v0.0.1-other, the lead ") {
		t.Fatalf("err %v, want the other build refused", err)
	}
}

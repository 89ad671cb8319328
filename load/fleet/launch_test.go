package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/servers/mockserver"
)

// TestMain makes this test binary a load agent when PLANRUN_TEST_AGENT is set: the
// process Scheduled starts as agent 0.
func TestMain(m *testing.M) {
	if os.Getenv("PLANRUN_TEST_AGENT") != "" {
		cfg := Config{Index: -1, NewBackend: connect.New, Log: os.Stderr}
		if err := cfg.Env(os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "test agent:", err)
			os.Exit(2)
		}
		if err := Serve(context.Background(), cfg); err != nil {
			fmt.Fprintln(os.Stderr, "test agent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// freeAddr is a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A scheduler's agents start before their lead listens (every index of a
// Kubernetes Indexed Job at once) and keep dialing it (Wait): once it listens with the
// token they were given, agents 1 and 2 dial in by themselves, agent 0 is started here
// as a process, and the three send a level's requests.
func TestScheduledAgentsDialInOnceTheLeadListens(t *testing.T) {
	t.Setenv("PLANRUN_TEST_AGENT", "1") // agent 0, the process Scheduled starts, is this binary
	addr := freeAddr(t)
	const n, token = 3, "the-job-secret"
	var wg sync.WaitGroup
	errs := make(chan error, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); wg.Wait() }()
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := Serve(ctx, Config{Lead: addr, Index: i, Of: n, Token: token, Wait: time.Minute, Pod: fmt.Sprintf("job-%d-x", i),
				Node: "node-a", NewBackend: connect.New, Log: io.Discard})
			if errors.Is(err, ErrBye) {
				err = nil
			}
			errs <- err
		}()
	}
	time.Sleep(1500 * time.Millisecond) // the agents have dialed, and been refused, by now
	f, err := Start(context.Background(), Options{Agents: n, Launcher: Scheduled{Command: []string{os.Args[0]}, Name: "kubernetes index"},
		Listen: addr, Token: token, LogDir: t.TempDir(), Connect: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, a := range f.Agents("c", nil) {
		want := fmt.Sprintf("kubernetes index %d", i)
		if a.Where != want || i > 0 && (a.Pod != fmt.Sprintf("job-%d-x", i) || a.Node != "node-a") || i == 0 && a.PID == os.Getpid() {
			t.Errorf("agent %d: %+v, want %s with its pod and node", i, a, want)
		}
	}
	b := mock(t, mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond})
	p := &executor.Prompts{Words: 4}
	if err := f.Assign(context.Background(), b, p, nil, time.Second, "c", "r", "", nil); err != nil {
		t.Fatal(err)
	}
	byAgent := map[int]int{}
	var mu sync.Mutex
	_, _, err = f.RunLevel(context.Background(), executor.LevelSpec{Concurrency: 3, Requests: 12, RepeatRuns: 1, Prompts: p,
		Request: backends.Request{Model: "m", MaxTokens: 2}}, executor.Options{OnRequest: func(ev executor.Event) {
		mu.Lock()
		defer mu.Unlock()
		byAgent[*ev.Agent]++
	}})
	if err != nil {
		t.Fatal(err)
	}
	if byAgent[0] != 4 || byAgent[1] != 4 || byAgent[2] != 4 {
		t.Errorf("requests by agent %v, want 4 each", byAgent)
	}
	f.Close()
	for range n - 1 {
		if err := <-errs; err != nil {
			t.Errorf("an agent ended: %v", err)
		}
	}
}

// An index the scheduler never started (its pod not scheduled) fails the fleet, named by
// its index, once Connect has passed; an agent whose lead never listens gives
// up after its Wait, saying how long it dialed.
func TestScheduledAgentThatNeverDialsIn(t *testing.T) {
	t.Setenv("PLANRUN_TEST_AGENT", "1")
	_, err := Start(context.Background(), Options{Agents: 2, Launcher: Scheduled{Command: []string{os.Args[0]}, Name: "kubernetes index"},
		Listen: freeAddr(t), Token: "t", LogDir: t.TempDir(), Connect: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "agent 1 (kubernetes index 1) did not connect and measure its clock within 2s") {
		t.Fatalf("err %v, want index 1 named as not connecting", err)
	}

	start := time.Now()
	err = Serve(context.Background(), Config{Lead: freeAddr(t), Index: 1, Of: 2, Token: "t", Wait: 2 * time.Second,
		NewBackend: connect.New, Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "connection refused (dialed for 2s)") || time.Since(start) < time.Second {
		t.Fatalf("err %v after %s, want the dial refused, given up after its wait", err, time.Since(start))
	}
}

// The environment a Kubernetes pod gives an agent: its index from the Job, how long to
// wait, its pod and node from the downward API.
func TestConfigFromAPodsEnvironment(t *testing.T) {
	env := map[string]string{EnvLead: "job-0.job.ns.svc:20001", EnvCount: "3", EnvToken: "t", "JOB_COMPLETION_INDEX": "2",
		EnvWait: "1h", EnvPod: "job-2-abcde", EnvNode: "node-b"}
	cfg := Config{Index: -1}
	if err := cfg.Env(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if cfg.Index != 2 || cfg.Of != 3 || cfg.Wait != time.Hour || cfg.Pod != "job-2-abcde" || cfg.Node != "node-b" {
		t.Errorf("config %+v", cfg)
	}
	env[EnvWait] = "soon"
	cfg = Config{Index: -1}
	if err := cfg.Env(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), EnvWait) {
		t.Errorf("err %v, want the wait refused", err)
	}
}

// Package selfbench measures planrun's own client: it drives the real timing core
// (connect.New) through the executor's closed loop (executor.RunLevel) against the mock
// server at rising concurrency, and holds every request's TTFT and TPOT against the
// times the mock wrote its chunks. It answers "at how many streams and tokens/s does
// the client stop being a faithful clock?" on the machine at hand.
package selfbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

// Config is what to run. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Levels are the concurrency levels (streams in flight), in order.
	Levels []int
	// TTFT and TPOT script the mock; Tokens is the output length of every request (one
	// token per chunk).
	TTFT, TPOT time.Duration
	Tokens     int
	// Jitter moves each scripted gap by up to ±Jitter, so streams stop emitting in
	// lockstep (the truth is still the recorded write times).
	Jitter time.Duration
	// Duration is the target length of each level's measured run: each stream sends
	// requests back to back for about this long (at least one request).
	Duration time.Duration
	// Protocol is "openai" (SSE, default) or "ollama" (NDJSON).
	Protocol string
	// Ramp spreads each level's start over this long (executor.LevelSpec.Ramp): the
	// streams start evenly over it and what they send before it is over is not
	// measured, so they do not start (and, on the mock's exact schedule, end and start
	// again) in one burst. 0: every stream starts at once.
	Ramp time.Duration
	// Agents, above 1, sends each level from that many load agents (package agent),
	// each a process running AgentCommand (the planrun binary and "agent"), this
	// process their lead merging their records; 1 sends it from this process.
	Agents       int
	AgentCommand []string
}

// DefaultConfig is the load `planrun selfbench` applies: 1 to 2,000 streams of 100
// one-token chunks at TPOT 5 ms, about 3 s per level.
func DefaultConfig() Config {
	return Config{Levels: []int{1, 64, 500, 1000, 2000}, TTFT: 20 * time.Millisecond,
		TPOT: 5 * time.Millisecond, Tokens: 100, Duration: 3 * time.Second, Protocol: "openai"}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if len(c.Levels) == 0 {
		c.Levels = d.Levels
	}
	if c.Tokens <= 0 {
		c.Tokens = d.Tokens
	}
	if c.Duration <= 0 {
		c.Duration = d.Duration
	}
	if c.Protocol == "" {
		c.Protocol = d.Protocol
	}
	return c
}

// MockConfig is the mock server configuration a Config needs: its timing, truth
// recording on and no faults.
func (c Config) MockConfig() mockserver.Config {
	c = c.withDefaults()
	return mockserver.Config{TTFT: c.TTFT, TPOT: c.TPOT, Jitter: c.Jitter, Seed: 1, OutputTokens: c.Tokens, TokensPerChunk: 1, RecordTruth: true}
}

// Target is the mock server under load.
type Target struct {
	// URL is the server's base URL (http://host:port, no /v1).
	URL string
	// Summaries returns what the server recorded since the last reset (and resets when
	// asked): Server.Summaries in process, FetchSummaries across processes.
	Summaries func(ctx context.Context, reset bool) ([]mockserver.Summary, error)
	// InProcess says the server shares this process, so the CPU figures include it.
	InProcess bool
	// Socket, when set, is the Unix socket the server listens on: the client's transport
	// (backends.NewTransport, otherwise unchanged) dials it instead of URL's host.
	Socket string
}

// unixClient is the production transport dialing a Unix socket.
func unixClient(socket string, t backends.Timeouts) *http.Client {
	tr := backends.NewTransport(t)
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	return &http.Client{Transport: tr}
}

// InProcess is a target served by srv in this process at url.
func InProcess(srv *mockserver.Server, url string) Target {
	return Target{URL: url, InProcess: true, Summaries: func(_ context.Context, reset bool) ([]mockserver.Summary, error) {
		return srv.Summaries(reset), nil
	}}
}

// Remote is a mock server in another process, reached at url or, when socket is not
// empty, on that Unix socket.
func Remote(url, socket string) Target {
	c := &http.Client{Timeout: time.Minute}
	if socket != "" {
		c = unixClient(socket, backends.Timeouts{})
		c.Timeout = time.Minute
	}
	return Target{URL: url, Socket: socket, Summaries: func(ctx context.Context, reset bool) ([]mockserver.Summary, error) {
		return mockserver.FetchSummaries(ctx, c, url, reset)
	}}
}

// Run measures every level in turn and calls done (if not nil) after each. It stops
// early, returning what it has, when ctx ends.
func Run(ctx context.Context, cfg Config, t Target, done func(LevelReport)) ([]LevelReport, error) {
	cfg = cfg.withDefaults()
	bn, err := newBench(ctx, cfg, t)
	if err != nil {
		return nil, err
	}
	defer bn.close()
	var out []LevelReport
	for i, streams := range cfg.Levels {
		if ctx.Err() != nil {
			break
		}
		l, ok, err := bn.level(ctx, i, streams)
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		out = append(out, l)
		if done != nil {
			done(l)
		}
	}
	return out, nil
}

// bench is a selfbench run: how a level is sent (from this process, or over load
// agents) and what every level shares.
type bench struct {
	cfg Config
	t   Target
	// send sends a level; agents is the load agents it goes over, nil for this process.
	send   func(context.Context, executor.LevelSpec, executor.Options) (executor.Result, []fleet.AgentLevel)
	agents *fleet.Fleet
	// fleetErr is an agent's failure, which ends the benchmark.
	fleetErr error
	// perRequest is a request's length on the mock's schedule; rounds how many requests
	// a stream sends back to back in a level's measured run.
	perRequest time.Duration
	rounds     int
}

// newBench makes the client against t and, for cfg.Agents above 1, starts the agents.
func newBench(ctx context.Context, cfg Config, t Target) (*bench, error) {
	bcfg := backends.Config{Kind: cfg.Protocol, Name: cfg.Protocol + ".selfbench", URL: t.URL,
		EngineExtensions: true, Timeouts: backends.Timeouts{Connect: 10 * time.Second, Idle: 30 * time.Second}}
	if cfg.Protocol != "ollama" {
		bcfg.URL += "/v1"
	}
	var opts []backends.Option
	if t.Socket != "" {
		opts = append(opts, backends.WithHTTPClient(unixClient(t.Socket, bcfg.Timeouts)))
	}
	b, err := connect.New(bcfg, opts...)
	if err != nil {
		return nil, err
	}
	bn := &bench{cfg: cfg, t: t, rounds: 1, perRequest: cfg.TTFT + time.Duration(max(cfg.Tokens-1, 0))*cfg.TPOT}
	if bn.perRequest > 0 {
		bn.rounds = max(1, int(cfg.Duration/bn.perRequest))
	}
	bn.send = func(ctx context.Context, lv executor.LevelSpec, o executor.Options) (executor.Result, []fleet.AgentLevel) {
		return executor.RunLevel(ctx, b, lv, o), nil
	}
	if cfg.Agents <= 1 {
		return bn, nil
	}
	if t.Socket != "" {
		return nil, errors.New("agents dial the mock over TCP: -unix is for one process")
	}
	if bn.agents, err = startFleet(ctx, cfg, bcfg); err != nil {
		return nil, err
	}
	bn.send = func(ctx context.Context, lv executor.LevelSpec, o executor.Options) (executor.Result, []fleet.AgentLevel) {
		res, levels, err := bn.agents.RunLevel(ctx, lv, o)
		if err != nil {
			res.Interrupted = true
			bn.fleetErr = err
		}
		return res, levels
	}
	return bn, nil
}

func (bn *bench) close() {
	if bn.agents != nil {
		bn.agents.Close()
	}
}

// level warms and measures level i of the given streams; ok is false when its measured
// run did not happen (ctx ended).
func (bn *bench) level(ctx context.Context, i, streams int) (l LevelReport, ok bool, err error) {
	cfg := bn.cfg
	// Warm-up: one short request per stream opens the keep-alive connections, so the
	// measured TTFTs do not include TCP connects the server never sees.
	warm := executor.LevelSpec{Concurrency: streams, Requests: streams, RepeatRuns: 1,
		Request: backends.Request{Model: "mock", MaxTokens: 2, ForceMaxTokens: true},
		Prompts: &executor.Prompts{Words: 1, Shared: true}}
	bn.send(ctx, warm, executor.Options{})
	if bn.fleetErr != nil {
		return l, false, bn.fleetErr
	}
	if _, err := bn.t.Summaries(ctx, true); err != nil {
		return l, false, err
	}

	// Each level's prompts are its own by their marker (load agents hold one Salt).
	prompts := &executor.Prompts{Words: 8, Salt: "selfbench", Marker: fmt.Sprintf("%d-%d", i, streams)}
	lv := executor.LevelSpec{Concurrency: streams, Requests: streams * bn.rounds, RepeatRuns: 1,
		Request: backends.Request{Model: "mock", MaxTokens: cfg.Tokens, ForceMaxTokens: true},
		Prompts: prompts, Ramp: cfg.Ramp,
		// The warm-up's requests may reuse each other's connections (one that ends before
		// the last starts frees its own): open one a stream, or the measured run dials the
		// rest inside its TTFTs.
		WarmConnections: streams}
	mon, rt0, cpu0 := selfcheck.Start(), readRuntime(), cpuTime()
	procs := 0
	o := executor.Options{OnRun: func(executor.RunResult) { procs = runtime.GOMAXPROCS(0) }}
	var merged []backends.Sample // an agent's samples come as records
	if cfg.Agents > 1 {
		o.OnRequest = func(ev executor.Event) {
			if !ev.Warmup && !ev.Ramp {
				merged = append(merged, *ev.Sample)
			}
		}
	}
	res, levels := bn.send(ctx, lv, o)
	cpu, rt, self := cpuTime()-cpu0, readRuntime().sub(rt0), mon.Stop()
	if bn.fleetErr != nil {
		return l, false, bn.fleetErr
	}
	for _, al := range levels {
		if al.Client != nil {
			cpu += al.Client.CPU // every agent's CPU is the client's
		}
	}
	sums, err := bn.t.Summaries(ctx, true)
	if err != nil {
		return l, false, err
	}
	if len(res.Runs) == 0 {
		return l, false, nil
	}
	run := res.Runs[0]
	if cfg.Agents > 1 {
		run.Samples = merged
	}
	l = Analyze(run.Samples, sums, prompts, run.Window())
	l.Agents = max(cfg.Agents, 1)
	l.Streams = streams
	l.CPU = cpu
	l.CPUIncludesServer = bn.t.InProcess
	l.setRuntime(rt, self)
	l.Procs = procs
	if l.Tokens > 0 {
		l.CPUPer1kTokens = time.Duration(float64(cpu) * 1000 / float64(l.Tokens))
	}
	if bn.perRequest > 0 {
		l.IdealTokensPerSec = float64(streams*cfg.Tokens) / bn.perRequest.Seconds()
	}
	return l, true, nil
}

// startFleet launches the load agents and hands them the mock's backend.
func startFleet(ctx context.Context, cfg Config, b backends.Config) (*fleet.Fleet, error) {
	dir, err := os.MkdirTemp("", "planrun-selfbench-agents-")
	if err != nil {
		return nil, err
	}
	f, err := fleet.Start(ctx, fleet.Options{Agents: cfg.Agents, Launcher: fleet.Local{Command: cfg.AgentCommand}, LogDir: dir})
	if err != nil {
		return nil, err
	}
	if err := f.Assign(ctx, b, &executor.Prompts{Words: 8, Salt: "selfbench"}, nil, 0, "selfbench", "selfbench", "", nil); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

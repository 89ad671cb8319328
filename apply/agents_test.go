package apply

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The load agents of these tests are this test binary in its agent mode
// (serveTestAgent, from TestMain with PLANRUN_TEST_AGENT set): the same agent.Serve the
// planrun binary's `agent` command runs, each its own process, launched by apply
// through Options.AgentCommand, against the mock server in its own process.
//
// Test hooks the agents read from their environment (test code only):
//   - PLANRUN_TEST_AGENT_SKEW="I=D": agent I's clock reads D ahead (agent.Config.Clock);
//   - PLANRUN_TEST_AGENT_DIE="I=N": agent I SIGKILLs itself as it sends its N-th request;
//   - PLANRUN_TEST_CLIENT_RPS="R": every client (each agent, and apply's own in-process
//     client when the test wraps it too) sends at most R requests/s (capped): a
//     documented per-client capacity, so that "one client cannot hold this rate" is the
//     same fact on any machine, loaded or not; PLANRUN_TEST_AGENT_RPS="I=R" caps agent I
//     alone.

// serveTestAgent is this process as one load agent, with the hooks its environment
// sets; it returns the exit code.
func serveTestAgent() int {
	cfg := fleet.Config{Index: -1, Log: os.Stderr}
	if err := cfg.Env(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "test agent:", err)
		return 2
	}
	if d, ok := hookFor(cfg.Index, "PLANRUN_TEST_AGENT_SKEW"); ok {
		skew, err := time.ParseDuration(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test agent:", err)
			return 2
		}
		cfg.Clock = skewedClock{skew}
	}
	dieAt := 0
	if n, ok := hookFor(cfg.Index, "PLANRUN_TEST_AGENT_DIE"); ok {
		dieAt, _ = strconv.Atoi(n)
	}
	rps, _ := strconv.ParseFloat(os.Getenv("PLANRUN_TEST_CLIENT_RPS"), 64)
	if v, ok := hookFor(cfg.Index, "PLANRUN_TEST_AGENT_RPS"); ok { // this agent's own capacity
		rps, _ = strconv.ParseFloat(v, 64)
	}
	cfg.NewBackend = func(c backends.Config, opts ...backends.Option) (backends.Backend, error) {
		b, err := connect.New(c, opts...)
		if err != nil {
			return nil, err
		}
		if tokens, ok := strings.CutPrefix(os.Getenv("PLANRUN_TEST_AGENT_BACKEND"), "instant:"); ok {
			n, _ := strconv.Atoi(tokens)
			b = instant{Backend: b, tokens: n} // BenchmarkLeadRSS's
		}
		if rps > 0 {
			b = &capped{Backend: b, gap: time.Duration(float64(time.Second) / rps)}
		}
		if dieAt > 0 {
			b = &dying{Backend: b, at: int64(dieAt)}
		}
		return b, nil
	}
	if err := fleet.Serve(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "test agent:", err)
		return 1
	}
	return 0
}

// hookFor reads "I=V" from the variable name: V when I is this agent's index.
func hookFor(index int, name string) (string, bool) {
	i, v, ok := strings.Cut(os.Getenv(name), "=")
	if !ok || i != strconv.Itoa(index) {
		return "", false
	}
	return v, true
}

type skewedClock struct{ skew time.Duration }

func (c skewedClock) Now() time.Time { return time.Now().Add(c.skew) }

// capped is a client that cannot send more than one request a gap: each request's
// send waits for the client's next free moment, after its own time has come (its
// Due), so a load faster than the client shows as the client's lateness and a
// shortfall of its own, as a saturated client's would.
type capped struct {
	backends.Backend
	gap  time.Duration
	mu   sync.Mutex
	next time.Time
}

func (c *capped) CallsDue() {}

func (c *capped) Do(ctx context.Context, req backends.Request) backends.Sample {
	if due := req.Due; due != nil {
		req.Turn = nil // the sender waits, not its connection
		req.Due = func(clk backends.Clock) time.Time {
			c.mu.Lock()
			at := time.Now()
			if c.next.After(at) {
				at = c.next
			}
			c.next = at.Add(c.gap)
			c.mu.Unlock()
			time.Sleep(time.Until(at))
			return due(clk)
		}
	}
	return c.Backend.Do(ctx, req)
}

// dying kills its process as it sends its at-th request.
type dying struct {
	backends.Backend
	n, at int64
	mu    sync.Mutex
}

func (d *dying) Do(ctx context.Context, req backends.Request) backends.Sample {
	d.mu.Lock()
	d.n++
	n := d.n
	d.mu.Unlock()
	if n == d.at {
		self, _ := os.FindProcess(os.Getpid())
		self.Kill() // SIGKILL on Unix: the agent dies mid-level, as a killed process does
		select {}
	}
	return d.Backend.Do(ctx, req)
}

// agentOptions runs the cells of p with this test binary as their agents' command.
func agentOptions(t *testing.T, p *plan.Plan, cells []*plan.Cell) Options {
	t.Helper()
	t.Setenv("PLANRUN_TEST_AGENT", "1")
	return Options{Plan: p, Cells: cells, NewBackend: newBackend, Quiet: true, ResultsDir: t.TempDir(),
		AgentCommand: []string{os.Args[0]}, GPU: gpu.Open()}
}

// truthMock starts this test binary as the mock server in its own process, recording
// each request's truth, and returns its URL and a reader of the truths; timing, when
// given, is its TTFT and TPOT (default 2 ms and 1 ms).
func truthMock(t *testing.T, timing ...time.Duration) (string, func() []mockserver.Summary) {
	t.Helper()
	env := []string{"PLANRUN_TEST_MOCK_TRUTH=1"}
	if len(timing) == 2 {
		env = append(env, "PLANRUN_TEST_MOCK_TTFT="+timing[0].String(), "PLANRUN_TEST_MOCK_TPOT="+timing[1].String())
	}
	url := mockProcess(t, env...)
	return url, func() []mockserver.Summary {
		sums, err := mockserver.FetchSummaries(context.Background(), &http.Client{Timeout: time.Minute}, url, false)
		if err != nil {
			t.Fatal(err)
		}
		return sums
	}
}

// agentsLoadPlan is a plan of one cell a workload, each workload (name, then its load)
// shared by n agents, with drawn prompt and output lengths so that requests differ.
func agentsLoadPlan(t *testing.T, url string, n int, loads ...string) (*plan.Plan, []*plan.Cell) {
	t.Helper()
	var b strings.Builder
	b.WriteString("variable \"url\" { type = string }\nbackend \"openai\" \"mock\" { url = \"${var.url}/v1\" }\n")
	var names []string
	for i := 0; i+1 < len(loads); i += 2 {
		fmt.Fprintf(&b, "workload %q {\n  agents = %d\n  prompt_tokens = uniform(16, 64)\n  max_tokens = uniform(2, 8)\n  %s\n}\n", loads[i], n, loads[i+1])
		names = append(names, "workload."+loads[i])
	}
	fmt.Fprintf(&b, "matrix \"m\" {\n  model = [\"mock\"]\n  tool = [backend.openai.mock]\n  workload = [%s]\n}\n", strings.Join(names, ", "))
	return loadPlan(t, b.String(), url)
}

// readAgentRecords reads each agent's own record file of the run's one cell.
func readAgentRecords(t *testing.T, runDir string, cell *plan.Cell, n int) [][]ledger.RequestRecord {
	t.Helper()
	out := make([][]ledger.RequestRecord, n)
	for i := range n {
		f, err := os.Open(filepath.Join(runDir, "agents", cellDir(cell.ID), fmt.Sprintf("agent-%d.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := ledger.ReadRequests(f)
		f.Close()
		if err != nil {
			t.Fatalf("agent %d's records: %v", i, err)
		}
		out[i] = recs
	}
	return out
}

// The merged row's figures are exactly what the agents' own records give, recomputed
// here from their files: each record moved onto the lead's clock by its
// agent's offset as the manifest records it, grouped by level and run, summarised as
// one process's would be. Percentiles and rates must be identical; means, sums in
// another order, within 1e-12.
func TestAgentsMergedFiguresRecomputeFromTheirRecords(t *testing.T) {
	url, _ := truthMock(t)
	const n = 4
	runs := "requests = 120\n  warmup_runs = 1\n  repeat_runs = 2\n  concurrency = [8]"
	p, cells := agentsLoadPlan(t, url, n, "closed", runs, "open", runs+"\n  request_rate = [150]\n  fidelity_lag_ms = 1000")
	res, err := Run(context.Background(), agentOptions(t, p, cells))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows: %+v", len(res.Rows), res.Rows)
	}
	man := readManifest(t, res.RunDir)
	if len(man.Agents) != 2*n {
		t.Fatalf("manifest agents: %+v", man.Agents)
	}
	for ci, row := range res.Rows {
		cell := cells[ci]
		if row.CellID != cell.ID {
			t.Fatalf("row %d is cell %s, want %s", ci, row.CellID, cell.ID)
		}
		perAgent := readAgentRecords(t, res.RunDir, cell, n)
		offsets := map[int]time.Duration{}
		for _, a := range man.Agents {
			if a.Cell == cell.ID {
				offsets[a.Index] = a.ClockStart.Offset
			}
		}
		t.Logf("%s: %d requests, ttft p50 %.3f ms, tok/s %.1f, fidelity %s, clock bound %.3f ms; notes %q", row.CellID, row.Requests,
			row.TTFT.P50*1e3, row.OutputTokS, row.Fidelity, row.ClockBoundMs, row.Notes)
		if row.Status != ledger.StatusOK || row.Agents != n || !(row.ClockBoundMs >= 0) {
			t.Fatalf("row %s: status %s, agents %d, clock bound %v", row.CellID, row.Status, row.Agents, row.ClockBoundMs)
		}
		want := recomputeRow(t, cell, row, perAgent, offsets)
		if want.Requests != row.Requests || want.Requests != 240 {
			t.Fatalf("%s: the agents' files hold %d measured requests, the row %d (want 240)", row.CellID, want.Requests, row.Requests)
		}
		checkRecomputed(t, row, want)
	}
}

// recomputeRow is the row one process would give from the agents' records of the row's
// level (perAgent[i] agent i's), each record's start moved onto the lead's clock by
// its agent's offset (offsets, by index; none for records moved already): grouped by
// run, summarised as one process's.
func recomputeRow(t *testing.T, cell *plan.Cell, row ledger.Row, perAgent [][]ledger.RequestRecord, offsets map[int]time.Duration) ledger.Row {
	t.Helper()
	w := cell.Workload
	level := plan.LoadLevel{Concurrency: row.Concurrency, RequestRate: row.RequestRate}
	target := stats.Target{PromptTokens: w.PromptTokens, MaxTokens: w.MaxTokens, Concurrency: closedLoopSlots(w, level), Confidence: w.Confidence}
	var runs []*stats.Accumulator
	for i, recs := range perAgent {
		off := offsets[i]
		for _, r := range recs {
			if r.CellID != cell.ID || r.Concurrency != row.Concurrency || r.RequestRate != row.RequestRate || r.Warmup || r.Ramp {
				continue
			}
			if r.Agent == nil || *r.Agent != i {
				t.Fatalf("agent %d's records hold a record of agent %v", i, r.Agent)
			}
			for len(runs) <= r.Run {
				runs = append(runs, stats.NewAccumulator(target))
			}
			r.Start = r.Start.Add(-off)
			runs[r.Run].Add(r.Event)
		}
	}
	var measured []stats.MeasuredRun
	for _, acc := range runs {
		measured = append(measured, stats.MeasuredRun{Acc: acc})
	}
	want := ledger.NewRow()
	want.SetStats(stats.SummarizeRuns(measured, target))
	return want
}

// checkRecomputed holds a merged row to its recomputation: percentiles and rates
// identical, means (sums in another order) within 1e-12.
func checkRecomputed(t *testing.T, row, want ledger.Row) {
	t.Helper()
	for _, d := range []struct {
		name      string
		got, want stats.Dist
	}{{"ttft", row.TTFT, want.TTFT}, {"tpot", row.TPOT, want.TPOT}, {"itl", row.ITL, want.ITL}, {"e2e", row.E2E, want.E2E},
		{"send lag", row.SendLag, want.SendLag}, {"turnaround", row.Turnaround, want.Turnaround}} {
		g, w := d.got, d.want
		if !same(g.P50, w.P50) || !same(g.P90, w.P90) || !same(g.P99, w.P99) || !same(g.Min, w.Min) || !same(g.Max, w.Max) || g.N != w.N ||
			!close12(g.Mean, w.Mean) {
			t.Errorf("%s %s: merged %+v, recomputed %+v", row.CellID, d.name, g, w)
		}
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"output tok/s", row.OutputTokS, want.OutputTokS}, {"requests/s", row.RequestsPerSec, want.RequestsPerSec},
		{"rate delivered", row.RateDelivered, want.RateDelivered}, {"rate scheduled", row.RateScheduled, want.RateScheduled},
		{"in flight held", row.InFlightHeld, want.InFlightHeld}, {"in flight p99", row.InFlightP99, want.InFlightP99}} {
		if !same(f.got, f.want) && !close12(f.got, f.want) {
			t.Errorf("%s %s: merged %v, recomputed %v", row.CellID, f.name, f.got, f.want)
		}
	}
}

// same is exact equality, NaN equal to NaN.
func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// close12 is equality within 1e-12 of the larger, for sums taken in another order.
func close12(a, b float64) bool {
	return same(a, b) || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// A client that cannot send more than 80 requests/s (capped: the documented per-client
// capacity of these tests, the same fact on any machine) cannot hold an open loop of
// 200/s alone: the row is client-bound. Four agents share the same level, 50/s each,
// within that capacity: the row is ok, and its rate is the sum of theirs. The hook is
// what makes one client too slow here; a real CPU limit on this 2-core machine, shared
// by four agents, would make the four no faster than the one. Were the split wrong (an
// agent sending more than its share), the four would be client-bound too; were the
// hook not applied, the one would be ok.
func TestAgentsHoldARateOneClientCannot(t *testing.T) {
	t.Setenv("PLANRUN_TEST_CLIENT_RPS", "80")
	url, _ := truthMock(t)
	load := "concurrency = [40]\n  request_rate = [200]\n  arrival = \"constant\"\n  requests = 300\n  warmup_runs = 0\n  repeat_runs = 1\n  fidelity_lag_ms = 1000"
	for _, tc := range []struct {
		agents int
		want   string
	}{{1, ledger.FidelityClientBound}, {4, ledger.FidelityOK}} {
		t.Run(fmt.Sprintf("agents=%d", tc.agents), func(t *testing.T) {
			p, cells := agentsLoadPlan(t, url, tc.agents, "w", load)
			o := agentOptions(t, p, cells)
			o.NewBackend = func(c backends.Config) (backends.Backend, error) { // the one client, in this process
				b, err := newBackend(c)
				return &capped{Backend: b, gap: time.Second / 80}, err
			}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			row := res.Rows[0]
			t.Logf("agents=%d: rate %.1f/s of %.1f/s, fidelity %s (%.1f%% short); notes %q", tc.agents, row.RateDelivered, row.RateScheduled,
				row.Fidelity, row.FidelityShortfallPct, row.Notes)
			if row.Status != ledger.StatusOK || row.Requests != 300 || row.Fidelity != tc.want {
				t.Fatalf("status %s, %d requests, fidelity %q; want %q", row.Status, row.Requests, row.Fidelity, tc.want)
			}
			if tc.agents == 1 && !(row.RateDelivered < 90) {
				t.Errorf("one client capped at 80/s delivered %.1f/s", row.RateDelivered)
			}
			if tc.agents == 4 && !within(row.RateDelivered, 200, 0.05) {
				t.Errorf("four agents delivered %.1f/s, want 200/s", row.RateDelivered)
			}
		})
	}
}

// One agent of four that cannot hold its share (capped at 30 requests/s of its 50) makes
// the row client-bound by name, while the others hold theirs.
func TestAgentsNameTheClientBoundAgent(t *testing.T) {
	t.Setenv("PLANRUN_TEST_AGENT_RPS", "1=30")
	url, _ := truthMock(t)
	load := "concurrency = [40]\n  request_rate = [200]\n  arrival = \"constant\"\n  requests = 300\n  warmup_runs = 0\n  repeat_runs = 1\n  fidelity_lag_ms = 1000"
	p, cells := agentsLoadPlan(t, url, 4, "w", load)
	res, err := Run(context.Background(), agentOptions(t, p, cells))
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	t.Logf("rate %.1f/s of %.1f/s, fidelity %s; notes %q", row.RateDelivered, row.RateScheduled, row.Fidelity, row.Notes)
	if row.Fidelity != ledger.FidelityClientBound || !strings.Contains(row.Notes, "agent 1 (local) delivered ") {
		t.Fatalf("fidelity %q, notes %q: want client-bound, naming agent 1", row.Fidelity, row.Notes)
	}
	for _, other := range []string{"agent 0 (local) delivered", "agent 2 (local) delivered", "agent 3 (local) delivered"} {
		if strings.Contains(row.Notes, other) {
			t.Errorf("notes name %q, which held its share: %q", other, row.Notes)
		}
	}
}

// An agent killed mid-level fails its cell, named with its reason; the other agents
// are stopped and none is left running; the level's row has no figures, so -resume
// runs the whole level again, and then it is whole.
func TestAgentKilledMidLevelFailsTheCell(t *testing.T) {
	url, _ := truthMock(t)
	p, cells := agentsLoadPlan(t, url, 3, "w", "concurrency = [3, 6]\n  requests = 60\n  warmup_runs = 0\n  repeat_runs = 1")
	t.Setenv("PLANRUN_TEST_AGENT_DIE", "1=8") // agent 1, at its 8th request: mid-level
	o := agentOptions(t, p, cells)
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || len(res.Cells) != 1 {
		t.Fatalf("rows %+v, cells %+v: one row, the level the agent died in", res.Rows, res.Cells)
	}
	row, cell := res.Rows[0], res.Cells[0]
	t.Logf("row: %s %q; cell: %s %q", row.Status, row.Notes, cell.Status, cell.Notes)
	if row.Status != ledger.StatusFailed || row.Requests != 0 || row.Concurrency != 3 ||
		!strings.Contains(row.Notes, "agent 1 (local, pid ") || !strings.Contains(row.Notes, "signal: killed") {
		t.Fatalf("row %s with %d requests, notes %q: want it failed, without figures, naming agent 1 and its kill", row.Status, row.Requests, row.Notes)
	}
	if cell.Status != ledger.StatusFailed || !strings.Contains(cell.Notes, "agent 1") {
		t.Fatalf("cell %s %q", cell.Status, cell.Notes)
	}
	man := readManifest(t, res.RunDir)
	for _, a := range man.Agents {
		if a.PID > 0 && proctest.Exists(a.PID) {
			t.Errorf("agent %d (pid %d) is still running", a.Index, a.PID)
		}
	}

	t.Setenv("PLANRUN_TEST_AGENT_DIE", "")
	o = agentOptions(t, p, cells)
	o.Resume = res.RunDir
	res, err = Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var levels []int
	for _, r := range latestRows(res.Rows) {
		if r.Status != ledger.StatusOK || r.Requests != 60 {
			t.Errorf("resumed: %s level c=%d: %s with %d requests (%s)", r.CellID, r.Concurrency, r.Status, r.Requests, r.Notes)
		}
		levels = append(levels, r.Concurrency)
	}
	if !slices.Equal(levels, []int{3, 6}) {
		t.Errorf("resumed run's levels %v, want both, the failed one run again", levels)
	}
}

// The same plan sends the same requests with one process and with four agents: each
// request (by its id) with the same prompt (its run's marker apart, which differs
// between any two runs), prompt and output length, and the same scheduled time.
func TestAgentsSendTheSameRequests(t *testing.T) {
	load := "concurrency = [8]\n  request_rate = [100]\n  requests = 80\n  warmup_runs = 0\n  repeat_runs = 1\n  fidelity_lag_ms = 1000"
	type sentReq struct {
		prompt            string
		promptTokens, out int
		scheduled         time.Duration
	}
	sent := map[int]map[string]sentReq{}
	for _, n := range []int{1, 4} {
		url, truths := truthMock(t)
		p, cells := agentsLoadPlan(t, url, n, "w", load)
		res, err := Run(context.Background(), agentOptions(t, p, cells))
		if err != nil {
			t.Fatal(err)
		}
		byServerID := map[string]mockserver.Summary{}
		for _, s := range truths() {
			byServerID[s.ID] = s
		}
		sent[n] = map[string]sentReq{}
		for _, r := range readSamples(t, res.RunDir) {
			if r.Warmup {
				continue
			}
			tr, ok := byServerID[r.RequestID]
			if !ok {
				t.Fatalf("agents=%d: %s (server id %q) never reached the server", n, r.ID, r.RequestID)
			}
			_, body, _ := strings.Cut(tr.Prompt, "] ") // past the run's marker
			sent[n][r.ID] = sentReq{prompt: body, promptTokens: r.PromptTokens, out: tr.Tokens, scheduled: r.Scheduled}
		}
	}
	if len(sent[1]) != 80 || len(sent[4]) != 80 {
		t.Fatalf("%d and %d requests sent, want 80 each", len(sent[1]), len(sent[4]))
	}
	lengths := map[int]bool{}
	for id, one := range sent[1] {
		if four := sent[4][id]; four != one {
			t.Errorf("%s: one process sent %+v, four agents %+v", id, one, four)
		}
		lengths[one.out] = true
	}
	if len(lengths) < 3 {
		t.Fatalf("output lengths %v: the requests hardly differ, so the test could not tell them apart", lengths)
	}
}

// A trace replayed by four agents, one of whose clocks reads 37 ms ahead (a test hook):
//   - the exchange recovers each offset within its stated bound;
//   - the lead moves the agent's records back: every agent's requests reach
//     the server (its kernel's arrival stamps, on the same machine's clock) a fraction
//     of a millisecond after their corrected start, never before it by more than the
//     bound, where the skewed agent's own file says 37 ms earlier;
//   - the arrivals keep the trace's order: no two rows reach the server out of their
//     schedule's order unless their send lags and twice the clock bound (each one's
//     start instant is off by at most the bound) account for it. Had the skewed agent
//     started its schedule on its own clock, its rows would land 37 ms off theirs.
func TestAgentsRecoverASkewedClockAndKeepTheTraceOrder(t *testing.T) {
	const skew = 37 * time.Millisecond
	t.Setenv("PLANRUN_TEST_AGENT_SKEW", "2="+skew.String())
	url, truths := truthMock(t)
	data, _ := seededTrace(300, 15, 11)
	src := strings.Replace(replayPlan, "  temperature = 0\n", "  temperature = 0\n  agents = 4\n  fidelity_lag_ms = 1000\n", 1)
	p, cells := loadPlan(t, src, url, "trace.jsonl", data)
	res, err := Run(context.Background(), agentOptions(t, p, cells))
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	if row.Status != ledger.StatusOK || row.Requests != 300 || row.Agents != 4 {
		t.Fatalf("row %s, %d requests, %d agents: %s", row.Status, row.Requests, row.Agents, row.Notes)
	}
	man := readManifest(t, res.RunDir)
	bound := time.Duration(row.ClockBoundMs * float64(time.Millisecond))
	offsets := map[int]time.Duration{}
	for _, a := range man.Agents {
		want := time.Duration(0)
		if a.Index == 2 {
			want = skew
		}
		c := a.ClockStart
		t.Logf("agent %d (%s, pid %d): offset %v ± %v at start, %v ± %v at end (drift %v)", a.Index, a.Where, a.PID, c.Offset, c.Bound,
			a.ClockEnd.Offset, a.ClockEnd.Bound, a.Drift)
		if d := c.Offset - want; d > c.Bound || -d > c.Bound {
			t.Errorf("agent %d: offset %v ± %v, its clock reads %v ahead", a.Index, c.Offset, c.Bound, want)
		}
		if d := a.ClockEnd.Offset - want; d > a.ClockEnd.Bound || -d > a.ClockEnd.Bound {
			t.Errorf("agent %d: offset after the level %v ± %v, its clock reads %v ahead", a.Index, a.ClockEnd.Offset, a.ClockEnd.Bound, want)
		}
		offsets[a.Index] = c.Offset
	}

	arrived := map[string]time.Time{}
	for _, s := range truths() {
		if !s.ArrivedKernel {
			t.Skip("the mock has no kernel arrival stamps here: arrivals cannot be held to the client's clock")
		}
		arrived[s.ID] = s.Arrived
	}
	type req struct {
		agent          int
		scheduled, lag time.Duration
		start, arrival time.Time
	}
	var reqs []req
	lead := map[int][]time.Duration{} // arrival − corrected start, by agent
	for _, r := range readSamples(t, res.RunDir) {
		at, ok := arrived[r.RequestID]
		if !ok || r.Agent == nil || !r.Paced {
			t.Fatalf("%s: arrival %v, agent %v, paced %v", r.ID, ok, r.Agent, r.Paced)
		}
		reqs = append(reqs, req{*r.Agent, r.Scheduled, r.SendLag, r.Start, at})
		lead[*r.Agent] = append(lead[*r.Agent], at.Sub(r.Start))
	}
	for i, ds := range lead {
		slices.Sort(ds)
		med := ds[len(ds)/2]
		t.Logf("agent %d: arrival − corrected start: min %v, median %v, max %v", i, ds[0], med, ds[len(ds)-1])
		if ds[0] < -bound || med > 5*time.Millisecond {
			t.Errorf("agent %d: its requests reached the server %v (least) to %v (median) after their corrected starts", i, ds[0], med)
		}
	}
	own := readAgentRecords(t, res.RunDir, cells[0], 4)[2]
	var raw []time.Duration
	for _, r := range own {
		raw = append(raw, arrived[r.RequestID].Sub(r.Start))
	}
	slices.Sort(raw)
	if med := raw[len(raw)/2]; med > -skew+5*time.Millisecond {
		t.Errorf("the skewed agent's own records put its starts %v before the arrivals: the hook did not skew it", -med)
	}

	slices.SortFunc(reqs, func(a, b req) int { return a.arrival.Compare(b.arrival) })
	inversions := 0
	for i := range reqs {
		for j := i + 1; j < len(reqs); j++ {
			a, b := reqs[i], reqs[j] // a arrived first
			if b.scheduled >= a.scheduled {
				continue
			}
			inversions++
			// b was due first but arrived second: only its later send and the two
			// start instants' error can explain it (a millisecond for the network).
			if gap := a.scheduled - b.scheduled; gap > b.lag-a.lag+2*bound+time.Millisecond {
				t.Errorf("arrival order: a row due %v (agent %d, lag %v) reached the server after one due %v later (agent %d, lag %v)",
					b.scheduled, b.agent, b.lag, gap, a.agent, a.lag)
			}
		}
	}
	t.Logf("%d rows, %d pairs out of the schedule's order at the server, each within the send lags and 2 × %v", len(reqs), inversions, bound)
}

// Against the server's truth (the mock's own record of when each request arrived and
// each chunk went out), four agents' row agrees as closely as one process's: its TTFT
// and TPOT medians. "As closely" allows the four a millisecond more error in TTFT and
// 0.2 ms in TPOT: four agents and the mock share this machine's two cores, and a
// process that waits for a core stamps late. The mock takes 20 ms to the first token
// and 4 ms a token, so that the clients mostly wait, as against a real server.
func TestAgentsAgreeWithTheServerAsOneClientDoes(t *testing.T) {
	load := "concurrency = [8]\n  requests = 200\n  warmup_runs = 0\n  repeat_runs = 1\n  fidelity_lag_ms = 1000\n  fidelity_tolerance_pct = 50"
	type errs struct{ ttft, tpot time.Duration }
	got := map[int]errs{}
	for _, n := range []int{1, 4} {
		url, truths := truthMock(t, 20*time.Millisecond, 4*time.Millisecond)
		p, cells := agentsLoadPlan(t, url, n, "w", load)
		res, err := Run(context.Background(), agentOptions(t, p, cells))
		if err != nil {
			t.Fatal(err)
		}
		row := res.Rows[0]
		measured := map[string]bool{}
		for _, r := range readSamples(t, res.RunDir) {
			measured[r.RequestID] = !r.Warmup
		}
		var ttft, tpot []float64
		for _, s := range truths() {
			if measured[s.ID] {
				ttft = append(ttft, s.TTFT.Seconds())
				tpot = append(tpot, s.TPOT.Seconds())
			}
		}
		truth := stats.NewDist(ttft)
		truthTPOT := stats.NewDist(tpot)
		e := errs{time.Duration((row.TTFT.P50 - truth.P50) * 1e9), time.Duration((row.TPOT.P50 - truthTPOT.P50) * 1e9)}
		t.Logf("agents=%d: TTFT p50 %.3f ms (server %.3f), TPOT p50 %.3f ms (server %.3f): off by %v and %v", n, row.TTFT.P50*1e3,
			truth.P50*1e3, row.TPOT.P50*1e3, truthTPOT.P50*1e3, e.ttft, e.tpot)
		if row.Status != ledger.StatusOK || truth.N != 200 {
			t.Fatalf("agents=%d: row %s, %d truths for 200 requests", n, row.Status, truth.N)
		}
		got[n] = e
	}
	abs := func(d time.Duration) time.Duration { return max(d, -d) }
	if one, four := got[1], got[4]; abs(four.ttft) > abs(one.ttft)+time.Millisecond || abs(four.tpot) > abs(one.tpot)+200*time.Microsecond {
		t.Errorf("four agents' TTFT and TPOT are off the server's by %v and %v, one process's by %v and %v", four.ttft, four.tpot, one.ttft, one.tpot)
	}
}

// Cancelling the run (the first Ctrl-C) stops every agent: the level is interrupted,
// what was measured is kept, and no agent process is left.
func TestAgentsStopOnInterrupt(t *testing.T) {
	url, _ := truthMock(t)
	p, cells := agentsLoadPlan(t, url, 3, "w", "concurrency = [3]\n  request_rate = [20]\n  requests = 400\n  warmup_runs = 0\n  repeat_runs = 1")
	o := agentOptions(t, p, cells)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	o.Progress = &cancelAfter{n: 20, cancel: func() { once.Do(cancel) }}
	o.Grace = time.Second
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusInterrupted || res.Rows[0].Requests < 20 || res.Rows[0].Requests > 100 {
		t.Fatalf("interrupted %v, rows %+v", res.Interrupted, res.Rows)
	}
	t.Logf("row: %s, %d requests", res.Rows[0].Status, res.Rows[0].Requests)
	for _, a := range readManifest(t, res.RunDir).Agents {
		if a.PID > 0 && proctest.Exists(a.PID) {
			t.Errorf("agent %d (pid %d) is still running", a.Index, a.PID)
		}
	}
}

// cancelAfter is a Progress that cancels the run once n measured requests finished.
type cancelAfter struct {
	n, seen int
	cancel  func()
}

func (c *cancelAfter) Note(string, ...any)                        {}
func (c *cancelAfter) StartLevel(*plan.Cell, plan.LoadLevel, int) {}
func (c *cancelAfter) EndLevel(*plan.Cell, ledger.Row)            {}
func (c *cancelAfter) Request(_ *plan.Cell, _ plan.LoadLevel, ev executor.Event) {
	if c.seen++; c.seen == c.n {
		c.cancel()
	}
}

// A precision block over agents: the lead watches the merged records and, once
// the figure is as precise as asked, tells every agent the run has enough; they stop
// well before the cap. Were the word not passed on, the agents would send all 4,000.
func TestAgentsStopWhenPreciseEnough(t *testing.T) {
	url := mockProcess(t, "PLANRUN_TEST_MOCK_TTFT=20ms", "PLANRUN_TEST_MOCK_TPOT=1ms", "PLANRUN_TEST_MOCK_JITTER=10ms")
	p, cells := agentsLoadPlan(t, url, 2, "w", "concurrency = [4]\n  requests = 40\n  warmup_runs = 0\n  repeat_runs = 1\n"+
		"  precision {\n    ttft_p50     = \"5%\"\n    max_requests = 4000\n  }")
	res, err := Run(context.Background(), agentOptions(t, p, cells))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	t.Logf("%d requests; notes %q", r.Succeeded, r.Notes)
	if r.Status != ledger.StatusOK || r.Agents != 2 || !strings.Contains(r.Notes, "precision ttft_p50 ±5%: reached in the run, after ") ||
		r.Succeeded <= 40 || r.Succeeded >= 4000 {
		t.Fatalf("%s, %d agents, %d requests, notes %q: want the precision reached past 40 requests and well before the cap", r.Status,
			r.Agents, r.Succeeded, r.Notes)
	}
}

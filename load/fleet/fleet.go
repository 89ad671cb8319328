package fleet

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/version"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

// Options configure a fleet of load agents.
type Options struct {
	// Agents is N, how many agents share the cell.
	Agents int
	// Launcher starts them.
	Launcher Launcher
	// Listen is the address the lead listens on for its agents (default
	// 127.0.0.1:0, for agents on this machine); Advertise the host they dial it by
	// (default Listen's host).
	Listen, Advertise string
	// LogDir is where the launcher puts the agents' logs.
	LogDir string
	// Connect bounds how long the agents have to connect and measure their clocks
	// (default ConnectTimeout); Arm how long each has to ready a run (ArmTimeout).
	Connect, Arm time.Duration
	// Token is the token the agents must present; empty makes a random one. A
	// scheduler that starts the agents before the lead (a Kubernetes Job's
	// indices) gives them the token the lead is given here.
	Token string
}

// ConnectTimeout and ArmTimeout are the fleet's default bounds: a batch scheduler may
// take some seconds to start its tasks; readying a run is warming its connections.
const (
	ConnectTimeout = 60 * time.Second
	ArmTimeout     = 60 * time.Second
)

// MinStartAhead is how far ahead of the moment every agent is armed the lead puts
// a run's start instant, at least: far enough for the go to reach them over loopback or
// a LAN on a loaded machine. It is four of the longest clock round trip when that is
// longer (a distant agent).
const MinStartAhead = 500 * time.Millisecond

// Fleet is the lead's side of a cell's load agents.
type Fleet struct {
	o      Options
	ln     net.Listener
	token  string
	procs  *Processes
	agents []*remote
	inbox  chan event
	exits  chan Exit
	quit   chan struct{} // closed by Close: the readers stop queueing
	closed bool
}

// remote is one agent as the lead sees it.
type remote struct {
	index int
	hello hello
	c     *conn
	rows  *conn
	// start is the clock estimate taken at connection, whose offset moves the agent's
	// records onto the lead's clock for the whole cell (so they can be moved
	// again from the manifest alone); end the latest, after each level, whose
	// difference from start (the drift) goes into the error bar. latest is end, for
	// the reader.
	start, end Estimate
	latest     atomic.Pointer[Estimate]
	offset     atomic.Int64 // start's, for the reader
	exited     bool
}

// event is one thing an agent said (kind and body), a finished request of it (ev), or
// the loss of its connection (err).
type event struct {
	agent int
	kind  string
	body  []byte
	ev    *executor.Event
	err   error
}

// AgentLevel is one agent's part of a level: its self-check over the measured runs
// (combine), and its share's requests and load in each measured run.
type AgentLevel struct {
	Index    int
	Where    string
	Client   *selfcheck.Report
	Loads    []Load
	Requests int
}

// Start listens, launches o.Agents agents and waits until every one has connected and
// measured its clock. An agent that cannot start, or does not connect in time, fails
// it, named with its reason.
func Start(ctx context.Context, o Options) (*Fleet, error) {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.Connect <= 0 {
		o.Connect = ConnectTimeout
	}
	if o.Arm <= 0 {
		o.Arm = ArmTimeout
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("the lead cannot listen for its agents on %s: %w", o.Listen, err)
	}
	if o.Token == "" {
		o.Token = NewToken()
	}
	f := &Fleet{o: o, ln: ln, token: o.Token, agents: make([]*remote, o.Agents),
		inbox: make(chan event, 4096), exits: make(chan Exit, o.Agents+1), quit: make(chan struct{})}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if o.Advertise != "" {
		host = o.Advertise
	}
	f.procs, err = o.Launcher.Launch(ctx, Launch{N: o.Agents, Lead: net.JoinHostPort(host, port), Token: f.token, LogDir: o.LogDir}, f.exits)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("agents could not be started: %w", err)
	}
	if err := f.connect(ctx); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// NewToken is a new random token for a fleet's agents to present (128 bits, hex).
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// connect accepts the agents' connections until each has both and has sent its clock
// estimate.
func (f *Fleet) connect(ctx context.Context) error {
	conns := make(chan accepted)
	go f.accept(conns)
	deadline := time.NewTimer(f.o.Connect)
	defer deadline.Stop()
	clocks := 0
	for clocks < len(f.agents) {
		select {
		case a := <-conns:
			if err := f.take(a); err != nil {
				return err
			}
		case e := <-f.inbox:
			if e.err != nil {
				return f.lost(e.agent, e.err)
			}
			switch e.kind {
			case kindClock:
				r := f.agents[e.agent]
				if err := json.Unmarshal(e.body, &r.start); err != nil {
					return fmt.Errorf("agent %d: its clock estimate: %w", e.agent, err)
				}
				r.end = r.start
				r.latest.Store(&r.start)
				r.offset.Store(int64(r.start.Offset))
				clocks++
			case kindFail:
				return f.failed(e)
			default:
				return fmt.Errorf("agent %d said %q before its clock estimate", e.agent, e.kind)
			}
		case x := <-f.exits:
			return f.exited(x, "before it connected")
		case <-deadline.C:
			return f.missing(fmt.Sprintf("did not connect and measure its clock within %s", f.o.Connect))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// accepted is one connection with its hello.
type accepted struct {
	c     *conn
	hello hello
	err   error
}

// accept takes connections and reads their hellos until the listener closes; hellos
// with the wrong token are refused there.
func (f *Fleet) accept(out chan<- accepted) {
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			c := newConn(nc)
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			kind, body, err := c.read()
			nc.SetReadDeadline(time.Time{})
			var h hello
			if err == nil && (kind != kindHello || json.Unmarshal(body, &h) != nil) {
				err = fmt.Errorf("a connection that said %q, not hello", kind)
			}
			if err == nil && h.Token != f.token {
				c.send(kindFail, fail{Reason: "wrong token: not an agent of this run"})
				nc.Close()
				return // a stray connection, never an agent of this fleet
			}
			if err != nil {
				nc.Close()
				return
			}
			select {
			case out <- accepted{c: c, hello: h}:
			case <-time.After(f.o.Connect):
				nc.Close()
			}
		}()
	}
}

// take registers an agent's connection and welcomes it.
func (f *Fleet) take(a accepted) error {
	h := a.hello
	if h.Of != len(f.agents) || h.Index < 0 || h.Index >= len(f.agents) {
		a.c.send(kindFail, fail{Reason: fmt.Sprintf("agent %d of %d: this cell has %d agents", h.Index, h.Of, len(f.agents))})
		a.c.close()
		return fmt.Errorf("an agent said it was %d of %d; the cell has %d agents", h.Index, h.Of, len(f.agents))
	}
	if v := version.String(); h.Version != v {
		// Another build may split, time or record requests otherwise: one binary runs both.
		a.c.send(kindFail, fail{Reason: "planrun " + h.Version + " is not the lead's " + v})
		a.c.close()
		return fmt.Errorf("agent %d (pid %d on %s) runs planrun %s, the lead %s: give the agents the same build (planrun_path)", h.Index, h.PID, h.Host, h.Version, v)
	}
	r := f.agents[h.Index]
	if r == nil {
		r = &remote{index: h.Index}
		f.agents[h.Index] = r
	}
	if h.Rows && r.rows != nil || !h.Rows && r.c != nil {
		a.c.send(kindFail, fail{Reason: "agent index taken"})
		a.c.close()
		return fmt.Errorf("two agents said they were agent %d (%s pid %d, and %s pid %d)", h.Index, r.hello.Host, r.hello.PID, h.Host, h.PID)
	}
	if err := a.c.send(kindWelcome, struct{}{}); err != nil {
		return fmt.Errorf("agent %d: %w", h.Index, err)
	}
	if h.Rows {
		r.rows = a.c
		return nil
	}
	r.hello, r.c = h, a.c
	go f.read(r)
	return nil
}

// read reads an agent's control connection: it answers clock pings at once, decodes
// records and moves their start onto the lead's clock, and queues everything
// else, in order, to the inbox.
func (f *Fleet) read(r *remote) {
	for {
		kind, body, err := r.c.read()
		t2 := time.Now().UnixNano()
		if err != nil {
			f.queue(event{agent: r.index, err: err})
			return
		}
		switch kind {
		case kindPing:
			var x Exchange
			if json.Unmarshal(body, &x) == nil {
				x.T2 = t2
				x.T3 = time.Now().UnixNano()
				r.c.send(kindPong, x)
			}
		case kindRecord:
			var rec ledger.RequestRecord
			if err := json.Unmarshal(body, &rec); err != nil {
				f.queue(event{agent: r.index, err: fmt.Errorf("a record it sent does not decode: %w", err)})
				return
			}
			ev := rec.Event
			idx := r.index
			ev.Agent = &idx
			if ev.Sample == nil {
				ev.Sample = &backends.Sample{}
			}
			ev.Start = ev.Start.Add(-time.Duration(r.offset.Load()))
			if !f.queue(event{agent: r.index, ev: &ev}) {
				return
			}
		default:
			if !f.queue(event{agent: r.index, kind: kind, body: append([]byte(nil), body...)}) {
				return
			}
		}
	}
}

// queue puts e in the inbox, unless the fleet is closed (false).
func (f *Fleet) queue(e event) bool {
	select {
	case f.inbox <- e:
		return true
	case <-f.quit:
		return false
	}
}

// Assign hands every agent the cell: its backend, prompts and shapes; records, when
// set, names each agent's own record file (its index replaces %d), and sources the
// source address each agent binds (by index; none when shorter).
func (f *Fleet) Assign(ctx context.Context, b backends.Config, p *executor.Prompts, shapes []executor.Shape, grace time.Duration,
	cellID, runID, records string, sources []string) error {
	for i, r := range f.agents {
		c := cell{Backend: b, Prompts: p, Shapes: shapes, Grace: grace, CellID: cellID, RunID: runID}
		if records != "" {
			c.Records = fmt.Sprintf(records, i)
		}
		if i < len(sources) {
			c.SourceAddr = sources[i]
		}
		if err := r.c.send(kindCell, c); err != nil {
			return f.lost(i, err)
		}
	}
	return f.await(ctx, kindReady, f.o.Arm, "did not ready the cell")
}

// await waits until every agent has said kind (records are not expected meanwhile).
func (f *Fleet) await(ctx context.Context, kind string, limit time.Duration, late string) error {
	got := make([]bool, len(f.agents))
	n := 0
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for n < len(f.agents) {
		select {
		case e := <-f.inbox:
			switch {
			case e.err != nil:
				return f.lost(e.agent, e.err)
			case e.kind == kindFail:
				return f.failed(e)
			case e.kind == kind && !got[e.agent]:
				got[e.agent] = true
				n++
				if kind == kindClock {
					var est Estimate
					if err := json.Unmarshal(e.body, &est); err != nil {
						return fmt.Errorf("agent %d: its clock estimate: %w", e.agent, err)
					}
					r := f.agents[e.agent]
					r.end = est
					r.latest.Store(&est)
				}
			case e.ev != nil:
				// a record of a run already done: not possible on one ordered connection
			default:
				return fmt.Errorf("agent %d said %q while the lead waited for %q", e.agent, e.kind, kind)
			}
		case x := <-f.exits:
			return f.exited(x, "")
		case <-deadline.C:
			var missing []string
			for i, ok := range got {
				if !ok {
					missing = append(missing, f.name(i))
				}
			}
			return fmt.Errorf("%s %s within %s", strings.Join(missing, ", "), late, limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// RunLevel runs lv's warm-up and measured runs over the agents, each at one start
// instant, and feeds opts.OnRequest every agent's records, merged, their starts on the
// lead's clock; opts.OnRun gets each run with its window over every agent.
// Cancelling ctx stops every agent (its requests in flight get the cell's grace);
// opts.Stop halts them. opts.Enough and opts.Abort are passed on to every agent. An
// agent that fails, dies or misses the start instant ends the level with an error
// naming it; the result then holds what was measured.
func (f *Fleet) RunLevel(ctx context.Context, lv executor.LevelSpec, opts executor.Options) (executor.Result, []AgentLevel, error) {
	res := executor.Result{Level: lv}
	levels := make([]AgentLevel, len(f.agents))
	for i := range levels {
		levels[i] = AgentLevel{Index: i, Where: f.where(i)}
	}
	l := level{Spec: lv, Replay: lv.Trace != nil, Concurrency: lv.Concurrency, RequestRate: lv.RequestRate}
	if lv.Prompts != nil {
		l.Marker, l.Nonce = lv.Prompts.Marker, lv.Prompts.Nonce
	}
	if err := f.broadcast(kindLevel, l); err != nil {
		return res, levels, err
	}
	total := lv.WarmupRuns + lv.RepeatRuns
	for i := 0; i < total && ctx.Err() == nil; i++ {
		warm := i < lv.WarmupRuns
		idx := i
		if !warm {
			idx -= lv.WarmupRuns
		}
		run, err := f.runOnce(ctx, lv, idx, warm, opts, levels)
		if opts.OnRun != nil && err == nil {
			opts.OnRun(run)
		}
		if !warm {
			res.Runs = append(res.Runs, run)
		}
		if err != nil {
			return res, levels, err
		}
		if run.Interrupted {
			res.Interrupted = true
			break
		}
	}
	res.Interrupted = res.Interrupted || ctx.Err() != nil
	if ctx.Err() == nil {
		return res, levels, f.syncClocks()
	}
	return res, levels, nil
}

// syncClocks has every agent measure its clock again, for its drift over a level.
func (f *Fleet) syncClocks() error {
	if err := f.broadcast(kindSync, struct{}{}); err != nil {
		return err
	}
	return f.await(context.Background(), kindClock, f.o.Connect, "did not measure its clock again")
}

// runOnce runs one run over the agents: armed, started at one instant, its records
// merged until every agent is done.
func (f *Fleet) runOnce(ctx context.Context, lv executor.LevelSpec, idx int, warm bool, opts executor.Options, levels []AgentLevel) (executor.RunResult, error) {
	run := executor.RunResult{Index: idx, Warmup: warm}
	if err := f.broadcast(kindRun, run2msg(idx, warm, opts.Enough != nil && !warm)); err != nil {
		return run, err
	}
	if err := f.await(ctx, kindArmed, f.o.Arm, "did not ready its run"); err != nil {
		if ctx.Err() != nil {
			run.Interrupted = true
			return run, nil
		}
		return run, err
	}
	at := time.Now().Add(f.startAhead())
	if err := f.broadcast(kindGo, goMsg{At: at.UnixNano()}); err != nil {
		return run, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var streams sync.WaitGroup
	defer func() {
		cancel() // a stream still sending rows (a run ended early, a fault) stops
		streams.Wait()
	}()
	if lv.Trace != nil {
		for _, r := range f.agents {
			streams.Add(1)
			go func() {
				defer streams.Done()
				f.stream(runCtx, lv.Trace, r)
			}()
		}
	}
	m := &merging{run: &run, levels: levels, opts: opts, warm: warm, ended: make([]bool, len(f.agents)), left: len(f.agents)}
	if err := f.merge(ctx, m); err != nil {
		return run, err
	}
	run.Interrupted = run.Interrupted || ctx.Err() != nil
	return run, nil
}

// merging is a run's records and ends as its agents send them.
type merging struct {
	run    *executor.RunResult
	levels []AgentLevel
	opts   executor.Options
	warm   bool
	ended  []bool // agent i said done
	left   int    // agents not done
}

// merge takes the run's messages until every agent is done, passing on enough, abort
// and stop to the agents as they come. An error is a fault that ends the run: the
// agents are halted before it is told.
func (f *Fleet) merge(ctx context.Context, m *merging) error {
	var enough <-chan struct{}
	if m.opts.Enough != nil && !m.warm {
		enough = m.opts.Enough(m.run.Index)
	}
	abortCh, stop, stopped := m.opts.Abort, m.opts.Stop, ctx.Done()
	for m.left > 0 {
		select {
		case e := <-f.inbox:
			if err := f.mergeOne(m, e); err != nil {
				return err
			}
		case x := <-f.exits:
			f.halt()
			return f.exited(x, "")
		case <-enough:
			f.broadcast(kindEnough, struct{}{})
			enough = nil
		case <-abortCh:
			msg := abort{Err: backends.Error{Class: backends.ErrServerDied, Message: "the server stopped before this request was sent"}}
			if m.opts.AbortErr != nil {
				msg.Err = *m.opts.AbortErr
			}
			f.broadcast(kindAbort, msg)
			abortCh = nil
		case <-stopped:
			f.broadcast(kindStop, struct{}{})
			stopped = nil
		case <-stop:
			f.halt()
			stop = nil
		}
	}
	return nil
}

// mergeOne is one message from an agent during a run: a record, its end of the run,
// or a fault (the agents halted).
func (f *Fleet) mergeOne(m *merging, e event) error {
	switch {
	case e.ev != nil:
		if !e.ev.Ramp {
			widen(m.run, e.ev.Sample)
		}
		if m.opts.OnRequest != nil {
			m.opts.OnRequest(*e.ev)
		}
	case e.err != nil:
		f.halt()
		return f.lost(e.agent, e.err)
	case e.kind == kindFail:
		f.halt()
		return f.failed(e)
	case e.kind == kindDone && !m.ended[e.agent]:
		var d done
		if err := json.Unmarshal(e.body, &d); err != nil {
			f.halt()
			return fmt.Errorf("%s: its end of run %d: %w", f.name(e.agent), m.run.Index, err)
		}
		m.ended[e.agent] = true
		m.left--
		m.run.Interrupted = m.run.Interrupted || d.Interrupted
		if d.Err != "" && m.run.Err == nil {
			m.run.Err = fmt.Errorf("%s: %s", f.name(e.agent), d.Err)
		}
		if !m.warm {
			al := &m.levels[e.agent]
			al.Client = combine(al.Client, d.Client)
			al.Loads = append(al.Loads, d.Load)
			al.Requests += d.Requests
		}
	default:
		f.halt()
		return fmt.Errorf("%s said %q during a run", f.name(e.agent), e.kind)
	}
	return nil
}

// mergeGCPercent is the lead's GOGC while it merges its agents' records and
// summarises them. Its live heap is then the level's exact figures (8 MB a figure a
// million requests, until they fold into sketches) and the records in flight; at the
// default 100 the heap grows to twice that before a collection. At 50, a million
// records from 4 agents peaked at 180 MB of RSS against 232 MB (docs/performance.md),
// for some 10% fewer records merged a second on 2 loaded cores: its sends are the
// agents', so its collections delay none.
const mergeGCPercent = 50

// CollectSooner sets mergeGCPercent for a level a fleet runs, its summary included,
// unless GOGC is set, and returns what restores the setting.
func CollectSooner() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(mergeGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// combine is the self-check of two windows of one agent: its CPU over both (their CPU
// over their wall time), and the worse of each lag figure, since the runs' histograms
// are not kept. nil stands for none.
func combine(a, b *selfcheck.Report) *selfcheck.Report {
	if a == nil || b == nil {
		return cmp.Or(a, b)
	}
	c := *a
	c.Wall, c.CPU = a.Wall+b.Wall, a.CPU+b.CPU
	if c.Wall > 0 {
		c.CPUPercent = float64(c.CPU) / float64(c.Wall) * 100
	}
	c.LagP50, c.LagP99, c.LagMax = max(a.LagP50, b.LagP50), max(a.LagP99, b.LagP99), max(a.LagMax, b.LagMax)
	c.Schedules = a.Schedules + b.Schedules
	return &c
}

func run2msg(idx int, warm, enough bool) run { return run{Index: idx, Warmup: warm, Enough: enough} }

// widen widens the run's window by one request, as the executor's drain does.
func widen(run *executor.RunResult, s *backends.Sample) {
	if run.Start.IsZero() || s.Start.Before(run.Start) {
		run.Start = s.Start
	}
	if e := s.Start.Add(s.End); e.After(run.End) {
		run.End = e
	}
}

// stream sends a run's trace rows to one agent on its rows connection, then the end.
func (f *Fleet) stream(ctx context.Context, trace executor.Trace, r *remote) {
	rows := make(chan executor.TraceRow, 256)
	errc := make(chan error, 1)
	go func() {
		defer close(rows)
		errc <- trace(ctx, rows)
	}()
	for row := range rows {
		if r.rows.send(kindRow, row) != nil {
			for range rows {
			}
			break
		}
	}
	end := fail{}
	if err := <-errc; err != nil {
		end.Reason = err.Error()
	}
	r.rows.send(kindEnd, end)
}

// startAhead is how far ahead the lead puts a run's start instant.
func (f *Fleet) startAhead() time.Duration {
	ahead := MinStartAhead
	for _, r := range f.agents {
		ahead = max(ahead, 8*r.latest.Load().Bound) // four round trips
	}
	return ahead
}

// broadcast sends one message to every agent.
func (f *Fleet) broadcast(kind string, v any) error {
	for i, r := range f.agents {
		if err := r.c.send(kind, v); err != nil {
			return f.lost(i, err)
		}
	}
	return nil
}

// halt stops every agent at once: the level is over.
func (f *Fleet) halt() {
	for _, r := range f.agents {
		if r != nil && r.c != nil {
			r.c.send(kindHalt, struct{}{})
		}
	}
}

// Bound is the error bar of every figure that compares agents' clocks (send lag,
// arrival order, delivered rate, the window): the largest over the agents of its
// clock bound, at connection or after the last level, plus its drift between the two.
func (f *Fleet) Bound() time.Duration {
	var b time.Duration
	for _, r := range f.agents {
		d := r.end.Offset - r.start.Offset
		b = max(b, max(r.start.Bound, r.end.Bound)+max(d, -d))
	}
	return b
}

// Agents are what the manifest records of each agent of the cell: where it ran, the
// source address it bound (sources, by index), and its clock at connection and after
// the last level.
func (f *Fleet) Agents(cellID string, sources []string) []ledger.AgentRun {
	out := make([]ledger.AgentRun, len(f.agents))
	for i, r := range f.agents {
		out[i] = ledger.AgentRun{Cell: cellID, Index: i, Where: f.where(i), Host: r.hello.Host, Node: r.hello.Node, Pod: r.hello.Pod, PID: r.hello.PID,
			ClockStart: r.start.record(), ClockEnd: r.end.record(), Drift: r.end.Offset - r.start.Offset}
		if i < len(sources) {
			out[i].SourceAddr = sources[i]
		}
	}
	return out
}

// where is where agent i runs, as its launcher says.
func (f *Fleet) where(i int) string { return f.procs.Where(i) }

// name names agent i in an error: its index, host and pid, and where it was launched.
func (f *Fleet) name(i int) string {
	r := f.agents[i]
	if r == nil || r.hello.Host == "" {
		return fmt.Sprintf("agent %d (%s)", i, f.where(i))
	}
	return fmt.Sprintf("agent %d (%s, pid %d on %s)", i, f.where(i), r.hello.PID, r.hello.Host)
}

// lost is the error of an agent whose connection ended: its process's exit and log
// when the launcher sees it end within a moment, else the connection's error.
func (f *Fleet) lost(i int, err error) error {
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case x := <-f.exits:
			if x.Agent == i || x.Agent < 0 {
				return f.exited(x, "")
			}
		case <-t.C:
			return fmt.Errorf("%s: its connection to the lead ended: %v", f.name(i), err)
		}
	}
}

// exited is the error of an agent process that ended.
func (f *Fleet) exited(x Exit, when string) error {
	what := "every agent"
	if x.Agent >= 0 {
		what = f.name(x.Agent)
		if r := f.agents[x.Agent]; r != nil {
			r.exited = true
		}
	}
	why := "it exited"
	if x.Err != nil {
		why = "it ended: " + x.Err.Error()
	}
	if when != "" {
		why += " " + when
	}
	if x.Log != "" {
		why += fmt.Sprintf(" (its log %s ends: %s)", x.LogPath, x.Log)
	} else if x.LogPath != "" {
		why += " (log: " + x.LogPath + ")"
	}
	return fmt.Errorf("%s: %s", what, why)
}

// failed is the error of an agent that said fail.
func (f *Fleet) failed(e event) error {
	var m fail
	json.Unmarshal(e.body, &m)
	return fmt.Errorf("%s: %s", f.name(e.agent), m.Reason)
}

// missing names the agents that have not connected, with their logs' ends.
func (f *Fleet) missing(why string) error {
	var names []string
	for i, r := range f.agents {
		if r == nil || r.c == nil || r.rows == nil {
			n := f.name(i)
			if tail := f.procs.LogTail(i); tail != "" {
				n += " (its log ends: " + tail + ")"
			}
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return fmt.Errorf("%s %s", strings.Join(names, ", "), why)
}

// Close says bye to every agent, waits a moment for them to exit, and stops the rest.
func (f *Fleet) Close() {
	if f.closed {
		return
	}
	f.closed = true
	close(f.quit)
	for _, r := range f.agents {
		if r != nil && r.c != nil {
			r.c.send(kindBye, struct{}{})
		}
	}
	f.ln.Close()
	grace := 5 * time.Second
	for _, r := range f.agents {
		if r == nil || r.c == nil {
			grace = 0 // one never connected: no bye reached it
		}
	}
	if f.procs != nil {
		f.procs.Stop(grace)
	}
	for _, r := range f.agents {
		if r == nil {
			continue
		}
		if r.c != nil {
			r.c.close()
		}
		if r.rows != nil {
			r.rows.close()
		}
	}
}

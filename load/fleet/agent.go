// Package fleet runs one cell's load from several processes, on this machine or on
// others: load agents, each the planrun binary in its agent mode (planrun agent), each
// sending its share of every level (executor.Share) at one start instant, while their
// lead (the planrun process that runs the cell: the apply, or in a Kubernetes Indexed
// Job index 0, which is also agent 0) merges their request records into the one row.
//
// An agent is started with flags or environment only (Config, Env), so that any
// scheduler can start agent i of N: local processes, ssh to the hosts listed, srun
// tasks of a Slurm job, or the indices of a Kubernetes Indexed Job. It dials the
// lead, measures its clock against the lead's (NTP-style, over K round
// trips, the least-delay one kept, its bound half that round trip), and then runs what
// it is sent, run by run, streaming each finished request's record back.
//
// The lead (Fleet) launches the agents, takes their hellos and clock estimates,
// hands them the cell, and runs each level's runs: every agent armed (its connections
// warmed), one start instant a moment ahead, the records merged as they come, each
// record's start moved onto the lead's clock by its agent's offset. An agent
// that dies, cannot start, or misses the start instant fails the level, naming it;
// never a quietly smaller load.
package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/version"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

// The environment an agent reads when its flags do not say (Env). A batch scheduler
// that numbers its tasks gives the index its own way: Slurm's SLURM_PROCID, a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX.
const (
	EnvLead  = "PLANRUN_AGENT_LEAD"  // host:port the agent dials: its lead
	EnvIndex = "PLANRUN_AGENT_INDEX" // the agent's index, from 0
	EnvCount = "PLANRUN_AGENT_COUNT" // how many agents share the cell
	EnvToken = "PLANRUN_AGENT_TOKEN" // the run's token, which the lead checks
	// EnvWait is how long the agent keeps dialing a lead that does not answer
	// yet (a Go duration): a scheduler that starts every index of a job at once starts
	// the agents before their lead listens.
	EnvWait = "PLANRUN_AGENT_WAIT"
	// EnvPod and EnvNode name the agent's pod and node where a scheduler says them
	// (a Kubernetes pod's downward API), for the manifest.
	EnvPod  = "PLANRUN_AGENT_POD"
	EnvNode = "PLANRUN_AGENT_NODE"
	// EnvListen is the host:port a lead in a scheduler's job listens on for its
	// agents (index 0 of a Kubernetes Indexed Job: its pod's address and the Job's port).
	EnvListen = "PLANRUN_AGENT_LISTEN"
)

// envLeadBefore is EnvLead's name before "coordinator" came to mean the batch-job
// coordinator alone: read when EnvLead is unset, so a script that starts agents itself
// keeps working.
const envLeadBefore = "PLANRUN_AGENT_COORDINATOR"

// indexEnv are the variables an agent's index is read from, in order.
var indexEnv = []string{EnvIndex, "SLURM_PROCID", "JOB_COMPLETION_INDEX"}

// monitorLead is how long before a run's instant the agent's self-check begins: room
// for the executor to hand its first paced request over ahead of its time.
const monitorLead = 10 * time.Millisecond

// RoundTrips is K, the clock exchange's round trips: the least-delay one of them
// gives the offset and its bound.
const RoundTrips = 16

// Config is what an agent runs with.
type Config struct {
	// Lead is the lead's host:port: agent 0's, the planrun that runs the cell.
	Lead string
	// Index is the agent's index (from 0) of Of agents.
	Index, Of int
	// Token is the run's token: the lead refuses an agent without it.
	Token string
	// NewBackend builds the backend the cell names (backends/connect.New).
	NewBackend func(backends.Config, ...backends.Option) (backends.Backend, error)
	// Clock is the agent's clock (nil: the system's): its requests' stamps, its
	// schedule and its side of the clock exchange. Tests give one that is off.
	Clock backends.Clock
	// Node is the name its batch scheduler gives its node (SLURMD_NODENAME, EnvNode),
	// if any; Pod its pod's (EnvPod).
	Node, Pod string
	// Wait is how long it keeps dialing a lead that refuses or cannot be
	// resolved yet, a second apart; 0 dials once.
	Wait time.Duration
	// Log receives what the agent says about itself (its stderr).
	Log io.Writer
}

// Env fills what the flags left unset from the environment (EnvLead, EnvIndex
// or a scheduler's own index, EnvCount, EnvToken, EnvWait, SLURMD_NODENAME or EnvNode,
// EnvPod), and says what is still missing.
func (c *Config) Env(getenv func(string) string) error {
	if c.Lead == "" {
		c.Lead = cmp.Or(getenv(EnvLead), getenv(envLeadBefore))
	}
	if c.Token == "" {
		c.Token = getenv(EnvToken)
	}
	if err := c.numbersFromEnv(getenv); err != nil {
		return err
	}
	if c.Node == "" {
		c.Node = cmp.Or(getenv("SLURMD_NODENAME"), getenv(EnvNode))
	}
	if c.Pod == "" {
		c.Pod = getenv(EnvPod)
	}
	switch {
	case c.Lead == "":
		return fmt.Errorf("no lead to dial: give -lead-addr HOST:PORT or set %s", EnvLead)
	case c.Of <= 0:
		return fmt.Errorf("no agent count: give -agents N or set %s", EnvCount)
	case c.Index < 0 || c.Index >= c.Of:
		return fmt.Errorf("agent index %d is not one of 0..%d: give -index I or set %s", c.Index, c.Of-1, EnvIndex)
	}
	return nil
}

// numbersFromEnv fills the index, count and wait the flags left unset from the
// environment, and refuses a value that is not one.
func (c *Config) numbersFromEnv(getenv func(string) string) error {
	if c.Index < 0 {
		for _, name := range indexEnv {
			if v := getenv(name); v != "" {
				i, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%s=%q is not an agent index", name, v)
				}
				c.Index = i
				break
			}
		}
	}
	if v := getenv(EnvCount); c.Of <= 0 && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s=%q is not a number of agents", EnvCount, v)
		}
		c.Of = n
	}
	if v := getenv(EnvWait); c.Wait == 0 && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%s=%q is not a duration such as 10m", EnvWait, v)
		}
		c.Wait = d
	}
	return nil
}

// ErrBye is Serve's answer when the lead ended the agent as planned.
var ErrBye = errors.New("the lead said bye")

// Serve is the agent: it dials the lead and runs what it is sent until the
// lead says bye (nil), the connection is lost, or ctx ends.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.Clock == nil {
		cfg.Clock = backends.SystemClock{}
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	a := &agentSide{cfg: cfg, pongs: make(chan Exchange, 1)}
	a.host, _ = os.Hostname()
	c, err := a.dial(ctx, false)
	if err != nil {
		return err
	}
	defer c.close()
	a.c = c
	rows, err := a.dial(ctx, true)
	if err != nil {
		return err
	}
	defer rows.close()
	a.rows = rows
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // a lost lead ends the agent, mid-run too
		<-ctx.Done()
		c.close()
		rows.close()
	}()
	defer a.closeRecords()

	msgs := make(chan message, 64)
	readErr := make(chan error, 1)
	go func() { readErr <- a.readLoop(msgs) }()
	go a.flushRecords(ctx)
	if err := a.syncClock(); err != nil {
		return fmt.Errorf("clock exchange: %w", err)
	}
	for {
		select {
		case m := <-msgs:
			if err := a.handle(ctx, m); err != nil {
				if errors.Is(err, ErrBye) {
					a.wait()
					return nil
				}
				a.c.send(kindFail, fail{Reason: err.Error()})
				return err
			}
		case err := <-readErr:
			a.cancelRun()
			a.wait()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("the lead went away: %w", err)
		}
	}
}

// message is one command read off the control connection.
type message struct {
	kind string
	body []byte
}

// agentSide is the agent's state: its connections, its clock estimate, the cell and
// level it runs, and the run in flight.
type agentSide struct {
	cfg   Config
	host  string
	c     *conn
	rows  *conn
	pongs chan Exchange
	clock Estimate

	backend backends.Backend
	cell    cell
	records *os.File // the agent's own copy of its records; nil: none
	recMu   sync.Mutex
	level   level

	// The run in flight: its spec and index, its controls, and its goroutine.
	lv       executor.LevelSpec
	run      run
	wg       sync.WaitGroup
	runMu    sync.Mutex
	cancel   context.CancelFunc
	enough   chan struct{}
	abortCh  chan struct{}
	abortErr *backends.Error
	stop     chan struct{}
	armed    bool
}

// dial opens one of the agent's two connections and says hello on it. A lead
// that cannot be reached yet (its name not resolved, its port not open) is dialed again
// every second for up to cfg.Wait; one that refuses the agent is not.
func (a *agentSide) dial(ctx context.Context, rowsConn bool) (*conn, error) {
	deadline := time.Now().Add(a.cfg.Wait)
	for {
		nc, err := a.dialOnce(ctx)
		if err == nil {
			return a.greet(nc, rowsConn)
		}
		if ctx.Err() != nil || time.Now().Add(time.Second).After(deadline) {
			if a.cfg.Wait > 0 {
				err = fmt.Errorf("%w (dialed for %s)", err, a.cfg.Wait)
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (a *agentSide) dialOnce(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	nc, err := d.DialContext(dctx, "tcp", a.cfg.Lead)
	if err != nil {
		return nil, fmt.Errorf("dialing the lead at %s: %w", a.cfg.Lead, err)
	}
	return nc, nil
}

// greet says hello on a new connection and reads the lead's welcome.
func (a *agentSide) greet(nc net.Conn, rowsConn bool) (*conn, error) {
	c := newConn(nc)
	h := hello{Index: a.cfg.Index, Of: a.cfg.Of, Token: a.cfg.Token, Rows: rowsConn, Host: a.host, Node: a.cfg.Node,
		Pod: a.cfg.Pod, PID: os.Getpid(), Version: version.String()}
	if err := c.send(kindHello, h); err != nil {
		nc.Close()
		return nil, err
	}
	kind, body, err := c.read()
	if err == nil && kind != kindWelcome {
		var f fail
		json.Unmarshal(body, &f)
		err = fmt.Errorf("the lead refused agent %d: %s", a.cfg.Index, f.Reason)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// readLoop reads the control connection: pongs go to the clock exchange, every other
// message to msgs, in order.
func (a *agentSide) readLoop(msgs chan<- message) error {
	for {
		kind, body, err := a.c.read()
		if err != nil {
			return err
		}
		now := a.cfg.Clock.Now().UnixNano()
		if kind == kindPong {
			var x Exchange
			if err := json.Unmarshal(body, &x); err != nil {
				return err
			}
			x.T4 = now
			a.pongs <- x
			continue
		}
		msgs <- message{kind, append([]byte(nil), body...)}
	}
}

// syncClock runs the clock exchange and sends the lead its estimate.
func (a *agentSide) syncClock() error {
	xs := make([]Exchange, 0, RoundTrips)
	for range RoundTrips {
		if err := a.c.send(kindPing, Exchange{T1: a.cfg.Clock.Now().UnixNano()}); err != nil {
			return err
		}
		select {
		case x := <-a.pongs:
			xs = append(xs, x)
		case <-time.After(30 * time.Second):
			return errors.New("no answer to a clock ping within 30s")
		}
	}
	e, ok := estimate(xs)
	if !ok {
		return errors.New("every round trip had a negative delay: the clock stepped during the exchange")
	}
	a.clock = e
	return a.c.send(kindClock, e)
}

// handle carries out one command.
func (a *agentSide) handle(ctx context.Context, m message) error {
	switch m.kind {
	case kindCell:
		return a.setCell(m.body)
	case kindLevel:
		a.wait()
		a.level = level{}
		if err := json.Unmarshal(m.body, &a.level); err != nil {
			return err
		}
		return nil
	case kindRun:
		a.wait()
		var r run
		if err := json.Unmarshal(m.body, &r); err != nil {
			return err
		}
		return a.arm(ctx, r)
	case kindGo:
		var g goMsg
		if err := json.Unmarshal(m.body, &g); err != nil {
			return err
		}
		return a.start(ctx, time.Unix(0, g.At))
	case kindEnough:
		a.control(func() { closeOnce(a.enough) })
	case kindAbort:
		var ab abort
		if err := json.Unmarshal(m.body, &ab); err != nil {
			return err
		}
		a.control(func() {
			*a.abortErr = ab.Err
			closeOnce(a.abortCh)
		})
	case kindStop:
		a.cancelRun()
	case kindHalt:
		a.cancelRun()
		a.control(func() { closeOnce(a.stop) })
	case kindSync:
		a.wait()
		return a.syncClock()
	case kindBye:
		return ErrBye
	default:
		return fmt.Errorf("unknown command %q", m.kind)
	}
	return nil
}

// setCell builds the cell's backend and opens the agent's own record file.
func (a *agentSide) setCell(body []byte) error {
	a.wait()
	var c cell
	if err := json.Unmarshal(body, &c); err != nil {
		return err
	}
	c.Backend.SourceAddr = c.SourceAddr
	var opts []backends.Option
	if _, system := a.cfg.Clock.(backends.SystemClock); !system {
		opts = append(opts, backends.WithClock(a.cfg.Clock))
	}
	b, err := a.cfg.NewBackend(c.Backend, opts...)
	if err != nil {
		return fmt.Errorf("backend %s: %w", c.Backend.Name, err)
	}
	a.closeRecords()
	if c.Records != "" {
		f, err := os.OpenFile(c.Records, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("its own request records: %w", err)
		}
		a.records = f
	}
	a.backend, a.cell = b, c
	return a.c.send(kindReady, struct{}{})
}

// arm readies run r: the level's spec with this agent's share, its connections warmed,
// its self-check begun at the level's first measured run.
func (a *agentSide) arm(ctx context.Context, r run) error {
	if a.backend == nil {
		return errors.New("a run before its cell")
	}
	lv := a.level.Spec
	p := *a.cell.Prompts
	p.Marker, p.Nonce = a.level.Marker, a.level.Nonce
	lv.Prompts, lv.Shapes = &p, a.cell.Shapes
	lv.Share = executor.Share{Index: a.cfg.Index, Of: a.cfg.Of}
	if r.Warmup {
		lv.WarmupRuns, lv.RepeatRuns = 1, 0
	} else {
		lv.WarmupRuns, lv.RepeatRuns = 0, 1
	}
	executor.WarmConnections(ctx, a.backend, lv)
	a.runMu.Lock()
	a.lv, a.run, a.armed = lv, r, true
	a.enough, a.abortCh, a.stop = make(chan struct{}), make(chan struct{}), make(chan struct{})
	// Set before the abort's channel closes: the executor reads it after.
	a.abortErr = &backends.Error{Class: backends.ErrServerDied, Message: "the lead aborted the level"}
	a.runMu.Unlock()
	return a.c.send(kindArmed, struct{}{})
}

// start begins the armed run at the lead's instant at, on the agent's clock;
// an instant already past is a fault: the run would not be the load asked.
func (a *agentSide) start(ctx context.Context, at time.Time) error {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if !a.armed {
		return errors.New("a go before its run")
	}
	a.armed = false
	local := a.clock.ToAgent(at)
	if now := a.cfg.Clock.Now(); !now.Before(local) {
		return fmt.Errorf("missed the start instant by %s (the go arrived after it)", now.Sub(local).Round(time.Microsecond))
	}
	lv, r := a.lv, a.run
	if a.level.Replay {
		lv.Trace = a.trace
	}
	runCtx, cancel := context.WithCancel(ctx)
	a.cancel = cancel
	meas := newMeasured(lv)
	opts := executor.Options{Grace: a.cell.Grace, Stop: a.stop, Abort: a.abortCh, AbortErr: a.abortErr, StartAt: local,
		Clock: a.cfg.Clock, DropSamples: true, OnRequest: func(ev executor.Event) { a.record(ev); meas.add(ev) }}
	if r.Enough {
		enough := a.enough
		opts.Enough = func(int) <-chan struct{} { return enough }
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer cancel()
		var mon *selfcheck.Monitor
		if !r.Warmup {
			// The self-check covers the run from just before its instant, not the
			// time ahead of it the lead gave, in which the agent only waits.
			if d := local.Sub(a.cfg.Clock.Now()) - monitorLead; d > 0 {
				time.Sleep(d)
			}
			mon = selfcheck.Start()
		}
		res := executor.RunOne(runCtx, a.backend, lv, r.Index, r.Warmup, opts)
		d := done{Start: res.Start, End: res.End, Interrupted: res.Interrupted, Requests: meas.requests, Load: meas.load()}
		if res.Err != nil {
			d.Err = res.Err.Error()
		}
		if mon != nil {
			rep := mon.Stop()
			d.Client = &rep
		}
		a.c.send(kindDone, d) // after every record: one connection, in order
	}()
	return nil
}

// record streams one finished request's record to the lead, and appends it to
// the agent's own file.
func (a *agentSide) record(ev executor.Event) {
	idx := a.cfg.Index
	ev.Agent = &idx
	rec := ledger.RequestRecord{CellID: a.cell.CellID, Concurrency: a.level.Concurrency, RequestRate: a.level.RequestRate,
		RunID: a.cell.RunID, Host: a.host, Event: ev}
	line, err := rec.MarshalJSON()
	if err != nil {
		fmt.Fprintf(a.cfg.Log, "planrun agent %d: a record: %v\n", a.cfg.Index, err)
		return
	}
	a.c.write(kindRecord, line, false)
	if a.records != nil {
		a.recMu.Lock()
		a.records.Write(append(line, '\n'))
		a.recMu.Unlock()
	}
}

// flushRecords flushes the streamed records every few milliseconds, so the lead
// sees them (and its progress moves) while the run goes on.
func (a *agentSide) flushRecords(ctx context.Context) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.c.flush()
		}
	}
}

func (a *agentSide) closeRecords() {
	a.recMu.Lock()
	defer a.recMu.Unlock()
	if a.records != nil {
		a.records.Close()
		a.records = nil
	}
}

// trace is the replayed rows as the lead streams them on the rows connection.
func (a *agentSide) trace(ctx context.Context, rows chan<- executor.TraceRow) error {
	stop := context.AfterFunc(ctx, func() { a.rows.nc.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		kind, body, err := a.rows.read()
		if err != nil {
			if ctx.Err() != nil {
				a.rows.nc.SetReadDeadline(time.Time{})
				return a.drainRows()
			}
			return err
		}
		switch kind {
		case kindEnd:
			var f fail
			json.Unmarshal(body, &f)
			if f.Reason != "" {
				return errors.New(f.Reason)
			}
			return nil
		case kindRow:
			var r executor.TraceRow
			if err := json.Unmarshal(body, &r); err != nil {
				return err
			}
			select {
			case rows <- r:
			case <-ctx.Done():
				return a.drainRows()
			}
		default:
			return fmt.Errorf("unknown row message %q", kind)
		}
	}
}

// drainRows reads the rest of a run's rows up to its end, so the next run's rows start
// clean.
func (a *agentSide) drainRows() error {
	for {
		kind, _, err := a.rows.read()
		if err != nil || kind == kindEnd {
			return nil
		}
	}
}

// control runs f on the run's controls under their lock.
func (a *agentSide) control(f func()) {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if a.stop != nil {
		f()
	}
}

// cancelRun stops the run in flight from sending (its requests get the grace).
func (a *agentSide) cancelRun() {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if a.cancel != nil {
		a.cancel()
	}
}

// wait waits for the run in flight to end.
func (a *agentSide) wait() { a.wg.Wait() }

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// measured gathers a run's measured requests for the agent's own share's load.
type measured struct {
	acc      *stats.Accumulator
	requests int
}

func newMeasured(lv executor.LevelSpec) *measured {
	slots := 0
	if lv.Session == nil && lv.Trace == nil && lv.RequestRate == 0 {
		slots = lv.Share.Slots(lv.Concurrency)
	}
	return &measured{acc: stats.NewAccumulator(stats.Target{Concurrency: slots})}
}

func (m *measured) add(ev executor.Event) {
	if ev.Warmup || ev.Ramp {
		return
	}
	m.requests++
	m.acc.Add(ev)
}

// load is the run's measured requests' delivered load.
func (m *measured) load() Load {
	d := m.acc.Summary(stats.Window{}).Delivered
	return Load{RateScheduled: d.RateScheduled, RateDelivered: d.RateDelivered, InFlightHeld: d.InFlightHeld,
		IdleHeld: d.IdleHeld, InFlightMax: float64(d.InFlightMax)}
}

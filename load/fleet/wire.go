package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

// The wire: each agent holds two TCP connections to its lead. On the control
// connection both sides write messages, one a line, "kind JSON\n": the lead's
// commands and the agent's answers, its clock pings and its finished requests (one
// requests.jsonl line each, as the agent wrote it). The rows connection carries a
// replay's trace rows from the lead alone, so that a command (stop, enough)
// never waits behind rows an agent has not yet used.
//
//	agent → lead   hello ping clock ready armed rec done fail
//	lead → agent   welcome pong cell level run go enough abort stop halt sync bye
//	lead → agent   (rows connection) row end
const (
	kindHello   = "hello"
	kindWelcome = "welcome"
	kindPing    = "ping"
	kindPong    = "pong"
	kindClock   = "clock"
	kindCell    = "cell"
	kindReady   = "ready"
	kindLevel   = "level"
	kindRun     = "run"
	kindArmed   = "armed"
	kindGo      = "go"
	kindRecord  = "rec"
	kindDone    = "done"
	kindFail    = "fail"
	kindEnough  = "enough"
	kindAbort   = "abort"
	kindStop    = "stop"
	kindHalt    = "halt"
	kindSync    = "sync"
	kindBye     = "bye"
	kindRow     = "row"
	kindEnd     = "end"
)

// hello is an agent's first message on each of its connections.
type hello struct {
	Index   int    `json:"index"`
	Of      int    `json:"of"`
	Token   string `json:"token"`
	Rows    bool   `json:"rows,omitempty"` // this is the rows connection
	Host    string `json:"host"`
	Node    string `json:"node,omitempty"` // the batch scheduler's name of its node
	Pod     string `json:"pod,omitempty"`  // its pod's name, on Kubernetes
	PID     int    `json:"pid"`
	Version string `json:"version"`
}

// cell is what an agent needs to send a cell's requests: the backend (its key is read
// from the agent's own environment, never sent), the prompts as calibrated, the
// requests' shapes, and where its request records go.
type cell struct {
	Backend backends.Config   `json:"backend"`
	Prompts *executor.Prompts `json:"prompts"`
	Shapes  []executor.Shape  `json:"shapes,omitempty"`
	Grace   time.Duration     `json:"grace_ns"`
	// Records, when set, is the file the agent appends its own request records to
	// (on a filesystem it shares with the lead), as it streams them.
	Records string `json:"records,omitempty"`
	// SourceAddr is the address the agent's connections to the server bind.
	SourceAddr string `json:"source_addr,omitempty"`
	// Template is where the agent's records belong: cell, run id.
	CellID string `json:"cell_id"`
	RunID  string `json:"run_id"`
}

// level is one level of the cell: its spec (its Prompts', Shapes' and Trace's parts
// travel apart), the prompts' marker, and the agent's share.
type level struct {
	Spec        executor.LevelSpec `json:"spec"`
	Marker      string             `json:"marker"`
	Nonce       string             `json:"nonce,omitempty"` // the level's prefix_cache = "bust" nonce
	Replay      bool               `json:"replay,omitempty"`
	Concurrency int                `json:"concurrency"`
	RequestRate float64            `json:"request_rate,omitempty"`
}

// run asks for one run of the level: its index, whether a warm-up, whether the
// lead may end it early (enough), and the most requests it sends then.
type run struct {
	Index  int  `json:"index"`
	Warmup bool `json:"warmup"`
	Enough bool `json:"enough,omitempty"`
}

// goMsg is the start instant, on the lead's clock (Unix ns).
type goMsg struct {
	At int64 `json:"at"`
}

// abort carries the error requests not yet sent fail with.
type abort struct {
	Err backends.Error `json:"err"`
}

// fail is an agent's reason to give up.
type fail struct {
	Reason string `json:"reason"`
}

// done is an agent's end of a run: its window on its own clock, its self-check since the
// level's first measured run, and its share's delivered load.
type done struct {
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Err         string    `json:"err,omitempty"`
	// Client is the agent's self-check over the run (from just before its instant);
	// nil after a warm-up run.
	Client *selfcheck.Report `json:"client,omitempty"`
	// Requests and Load are the run's measured requests and the load they put on the
	// server (the agent's share alone), for the verdict on the agent's own share.
	Requests int  `json:"requests"`
	Load     Load `json:"load"`
}

// Load is one agent's share of a run's delivered load (stats.Delivered of its own
// requests): a paced share's rate against its schedule's, a closed loop's mean in
// flight and idle over its held span, and the most in flight. NaN: not measured.
type Load struct {
	RateScheduled, RateDelivered        float64
	InFlightHeld, IdleHeld, InFlightMax float64
}

// loadJSON is Load on the wire: JSON has no NaN.
type loadJSON struct {
	RateScheduled *float64 `json:"rate_scheduled,omitempty"`
	RateDelivered *float64 `json:"rate_delivered,omitempty"`
	InFlightHeld  *float64 `json:"in_flight_held,omitempty"`
	IdleHeld      *float64 `json:"idle_held,omitempty"`
	InFlightMax   *float64 `json:"in_flight_max,omitempty"`
}

func (l Load) MarshalJSON() ([]byte, error) {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(loadJSON{num(l.RateScheduled), num(l.RateDelivered), num(l.InFlightHeld), num(l.IdleHeld), num(l.InFlightMax)})
}

func (l *Load) UnmarshalJSON(b []byte) error {
	var j loadJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*l = Load{val(j.RateScheduled), val(j.RateDelivered), val(j.InFlightHeld), val(j.IdleHeld), val(j.InFlightMax)}
	return nil
}

// conn is one end of a connection: lines read with r, written with w under mu.
// Records are buffered and flushed by a ticker (flushRecords); every other message is
// flushed at once.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	mu sync.Mutex
	w  *bufio.Writer
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 256<<10)}
}

// send writes one message and flushes it.
func (c *conn) send(kind string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(kind, body, true)
}

// write writes kind and the JSON body as one line, flushed when flush.
func (c *conn) write(kind string, body []byte, flush bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.WriteString(kind)
	c.w.WriteByte(' ')
	c.w.Write(body)
	c.w.WriteByte('\n')
	if flush {
		return c.w.Flush()
	}
	return nil
}

// flush writes what is buffered.
func (c *conn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Flush()
}

// read reads one message: its kind and JSON body (valid until the next read).
func (c *conn) read() (kind string, body []byte, err error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long record (a stream of many chunks): gather it whole.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		return "", nil, err
	}
	k, b, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\n")), []byte(" "))
	if !ok {
		return "", nil, fmt.Errorf("malformed message %q", truncate(line, 80))
	}
	return string(k), b, nil
}

func (c *conn) close() error { return c.nc.Close() }

// truncate is b, cut to at most n bytes, for an error message.
func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

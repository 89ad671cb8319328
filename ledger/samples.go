package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// RequestRecord is one line of requests.jsonl: the executor's record of the request
// (its Sample holds every timestamp, so any figure can be recomputed) plus where it
// belongs.
type RequestRecord struct {
	CellID      string
	Concurrency int // the level the request ran at
	// RequestRate is the open-loop arrival rate of the level (requests/s); 0 closed loop.
	RequestRate float64
	// RunID and Host say which run, on which machine, sent the request (as in the rows).
	RunID string
	Host  string
	executor.Event
}

// requestLine is a RequestRecord as one line writes it: cell_id, run, concurrency,
// request_rate, warmup, ramp, run_id and host, then the Event's own fields (the Sample's,
// session, turn, shared_prefix_tokens, and any tagged field added to Event), then
// scheduled_ns and send_lag_ns, present exactly when the request was paced. The
// Event's run, warmup and ramp are shadowed by the copies here, which put them where the
// format has always had them (TestRequestLine pins the bytes).
type requestLine struct {
	CellID      string  `json:"cell_id"`
	Run         int     `json:"run"`         // measured run index, from 0
	Concurrency int     `json:"concurrency"` // the level the request ran at
	RequestRate float64 `json:"request_rate,omitempty"`
	Warmup      bool    `json:"warmup"` // false for measured requests
	Ramp        bool    `json:"ramp,omitempty"`
	RunID       string  `json:"run_id,omitempty"`
	Host        string  `json:"host,omitempty"`
	executor.Event
	// ScheduledNS is, in open loop and trace replay, when the request was due (ns from
	// its run's start), and SendLagNS how late it was sent; absent in closed loop.
	ScheduledNS *int64 `json:"scheduled_ns,omitempty"`
	SendLagNS   *int64 `json:"send_lag_ns,omitempty"`
}

func (r *RequestRecord) line() requestLine {
	l := requestLine{CellID: r.CellID, Run: r.Run, Concurrency: r.Concurrency, RequestRate: r.RequestRate,
		Warmup: r.Warmup, Ramp: r.Ramp, RunID: r.RunID, Host: r.Host, Event: r.Event}
	if l.Sample == nil { // a record without a sample still has the sample's fields, zero
		l.Sample = &backends.Sample{}
	}
	if r.Paced {
		at, lag := int64(r.Scheduled), int64(r.SendLag)
		l.ScheduledNS, l.SendLagNS = &at, &lag
	}
	return l
}

// MarshalJSON writes the record as one line of requests.jsonl does.
func (r RequestRecord) MarshalJSON() ([]byte, error) { return json.Marshal(r.line()) }

// UnmarshalJSON reads a line of requests.jsonl.
func (r *RequestRecord) UnmarshalJSON(b []byte) error {
	var l requestLine
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*r = RequestRecord{CellID: l.CellID, Concurrency: l.Concurrency, RequestRate: l.RequestRate, RunID: l.RunID,
		Host: l.Host, Event: l.Event}
	r.Run, r.Warmup, r.Ramp = l.Run, l.Warmup, l.Ramp
	if l.ScheduledNS != nil && l.SendLagNS != nil {
		r.Paced, r.Scheduled, r.SendLag = true, time.Duration(*l.ScheduledNS), time.Duration(*l.SendLagNS)
	}
	return nil
}

// flushEvery bounds how many records sit in the buffer: a crash loses at most this
// many lines of the cell in flight, and apply calls Flush after each level.
const flushEvery = 32

// RequestLog writes RequestRecords as JSON lines as they come. Safe for concurrent use
// (apply writes from the executor's one drain goroutine, not from the requests'). A log
// from OpenRequestLog is also safe for several runs appending to one file (an output
// "jsonl" shared by plans): each flush writes whole lines, in one write at the end of
// the file, under an advisory lock (flock; where there is none, O_APPEND alone).
type RequestLog struct {
	mu      sync.Mutex
	f       *os.File  // nil when writing to a plain io.Writer
	w       io.Writer // f, or the plain writer
	buf     []byte    // whole lines not yet written
	pending int
	err     error // the first failed write: the log stays failed
}

// OpenRequestLog opens path for appending (a resumed run adds to the same file),
// creating its directory (an output "jsonl" path may name a new one).
func OpenRequestLog(path string) (*RequestLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open raw samples: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open raw samples: %w", err)
	}
	return &RequestLog{f: f, w: f}, nil
}

// NewRequestLog writes to w; Close flushes but does not close w. A deliberate seam:
// apply opens its log with OpenRequestLog, tests and tools write to any writer.
func NewRequestLog(w io.Writer) *RequestLog {
	return &RequestLog{w: w}
}

// Write appends one record as one line. A failed write leaves the log failed: every
// later Write and Flush returns the same error, so a caller may check once per batch.
func (l *RequestLog) Write(rec RequestRecord) error {
	line, err := json.Marshal(rec.line())
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	l.buf = append(append(l.buf, line...), '\n')
	l.pending++
	if l.pending >= flushEvery || len(l.buf) >= 64<<10 {
		return l.flush()
	}
	return nil
}

// Flush writes buffered lines to the file.
func (l *RequestLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flush()
}

func (l *RequestLog) flush() error {
	if l.err != nil || len(l.buf) == 0 {
		return l.err
	}
	l.pending = 0
	if l.f == nil {
		_, l.err = l.w.Write(l.buf)
	} else {
		l.err = l.appendLocked()
	}
	l.buf = l.buf[:0]
	return l.err
}

// appendLocked writes the buffered lines at the end of the file under the lock, first
// cutting off a torn last line (a run killed mid-write leaves one: JSON lines hold no
// raw newline, so a file not ending in one ends torn).
func (l *RequestLog) appendLocked() error {
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock raw samples: %w", err)
	}
	defer unlockFile(l.f)
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	if size := fi.Size(); size > 0 {
		if err := cutTornLine(l.f, size); err != nil {
			return fmt.Errorf("repair torn last line of %s: %w", l.f.Name(), err)
		}
	}
	_, err = l.f.Write(l.buf)
	return err
}

// cutTornLine truncates f (of size bytes) after its last newline when it does not end
// in one.
func cutTornLine(f *os.File, size int64) error {
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil || last[0] == '\n' {
		return err // whole, as nearly always: one byte read per flush
	}
	const chunk = 4 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return f.Truncate(start + int64(i) + 1)
		}
		end = start
	}
	return f.Truncate(0)
}

// Close flushes, fsyncs and closes the file.
func (l *RequestLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.flush()
	if l.f != nil {
		if serr := l.f.Sync(); err == nil {
			err = serr
		}
		if cerr := l.f.Close(); err == nil {
			err = cerr
		}
		l.f = nil
	}
	return err
}

// ReadRequests reads a requests.jsonl stream back (for recomputing figures and tests).
// A deliberate seam: ledger owns the format, so its reader lives here for tools, though
// planrun itself only writes it.
func ReadRequests(r io.Reader) ([]RequestRecord, error) {
	var out []RequestRecord
	dec := json.NewDecoder(r)
	for {
		var rec RequestRecord
		if err := dec.Decode(&rec); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("raw sample %d: %w", len(out)+1, err)
		}
		out = append(out, rec)
	}
}

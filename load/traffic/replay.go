package traffic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// window is what the validating pass over a replayed trace found: which rows are
// sent, and the lengths that bound them. The rows themselves are read again, streamed,
// while the run sends them: a trace is never held in memory.
type window struct {
	spec    dataset.Spec
	start   time.Duration // of the window, in trace time
	speedup float64
	// rows is how many rows are replayed: the first rows at or after the window's start,
	// up to its end and the workload's requests.
	rows int
	// bounds are the replayed rows with the shortest and longest prompt and the longest
	// request, so the tokens-per-word fit and the context check cover every row.
	bounds []executor.Shape
	// burst is the most rows due within any warmWindow of the replay's time: about
	// how many connections its busiest moment needs open.
	burst peakDue
}

// warmWindow is the stretch of replay time whose rows a replay opens connections for
// ahead of its start (requests of a second or two overlap), and maxWarm the most it
// opens.
const (
	warmWindow = 2 * time.Second
	maxWarm    = 128
)

// scanTrace validates a replay workload's trace in one streamed pass (SHA-256, row count,
// a malformed row or out-of-order timestamp as file:line) before anything is sent, and
// decides which rows its window replays. Its Sample has no rows: Info for the manifest
// and, when the trace is cut, a Note saying where.
func scanTrace(w *plan.Workload) (*window, dataset.Sample, error) {
	r := w.Replay
	win := &window{spec: w.Dataset.Spec, start: r.Start, speedup: r.Speedup}
	end := time.Duration(-1)
	if r.Duration > 0 {
		end = win.start + r.Duration
	}
	first, last, after, cut := time.Duration(-1), time.Duration(0), 0, time.Duration(-1)
	var bounds shapeBounds
	info, err := dataset.Scan(win.spec, func(row dataset.Row) error {
		if first < 0 {
			first = row.Timestamp
		}
		last = row.Timestamp
		if row.Timestamp < win.start {
			return nil
		}
		after++
		if (end >= 0 && row.Timestamp >= end) || (w.Requests > 0 && win.rows >= w.Requests) {
			if cut < 0 {
				cut = row.Timestamp
			}
			return nil
		}
		bounds.add(executor.Shape{PromptTokens: row.InputLength, MaxTokens: row.OutputLength}, win.rows == 0)
		at := win.at(row)
		win.burst.add(at)
		win.rows++
		return nil
	})
	if err != nil {
		return nil, dataset.Sample{}, err
	}
	if win.rows == 0 {
		return nil, dataset.Sample{}, fmt.Errorf("%s: the replay window (start %s, duration %s) holds none of the trace's rows, which span %s to %s of trace time",
			win.spec.Path, r.Start, durationOrEnd(r.Duration), first, last)
	}
	win.bounds = []executor.Shape{bounds.lo, bounds.hi, bounds.long}
	s := dataset.Sample{Info: info}
	if win.rows < after {
		s.Note = fmt.Sprintf("trace cut at %s: %d of %d rows replayed", cut, win.rows, after)
	}
	return win, s, nil
}

// shapeBounds are the extreme shapes of a window's rows: the shortest and longest
// prompt, and the longest request.
type shapeBounds struct{ lo, hi, long executor.Shape }

// add widens the bounds by sh, the window's first row when first.
func (b *shapeBounds) add(sh executor.Shape, first bool) {
	if first || sh.PromptTokens < b.lo.PromptTokens {
		b.lo = sh
	}
	if sh.PromptTokens > b.hi.PromptTokens {
		b.hi = sh
	}
	if sh.PromptTokens+sh.MaxTokens > b.long.PromptTokens+b.long.MaxTokens {
		b.long = sh
	}
}

func durationOrEnd(d time.Duration) string {
	if d == 0 {
		return "to the end"
	}
	return d.String()
}

// at is when a row of the window is sent, from the run's start.
func (win *window) at(row dataset.Row) time.Duration {
	return time.Duration(float64(row.Timestamp-win.start) / win.speedup)
}

// errTraceSent stops the reader once the window's rows are all sent.
var errTraceSent = errors.New("replay window sent")

// trace is the window's executor.Trace: it streams the file again and hands each
// replayed row to the executor at (timestamp − start) / speedup, with its own lengths
// and prefix blocks.
func (win *window) trace(ctx context.Context, rows chan<- executor.TraceRow) error {
	n := 0
	_, err := dataset.Scan(win.spec, func(row dataset.Row) error {
		if row.Timestamp < win.start {
			return nil
		}
		if n == win.rows {
			return errTraceSent
		}
		n++
		at := win.at(row)
		select {
		case rows <- executor.TraceRow{At: at, Shape: executor.Shape{PromptTokens: row.InputLength,
			MaxTokens: row.OutputLength, HashIDs: row.HashIDs}}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if errors.Is(err, errTraceSent) || ctx.Err() != nil {
		return nil
	}
	return err
}

// level makes a replay workload's level send its trace window: one request per
// replayed row, each at its own time.
func (win *window) level(lv *executor.LevelSpec) {
	lv.Trace, lv.Requests = win.trace, win.rows
	lv.WarmConnections = win.burst.connections(lv.Concurrency)
}

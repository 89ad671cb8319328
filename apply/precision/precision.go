// Package precision stops a level's measured runs once a workload's precision block is
// met: after each batch of a run's measured requests it reads the run's intervals and,
// when every figure the block names is within its half-width (with a margin to spare),
// closes the run's Enough channel (executor.Options.Enough); max_duration closes it
// too. It then says, for the row, how each run ended and how precise the row is.
package precision

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// Watch stops each measured run of a level with a precision block once the block's
// figures are as precise as asked (with stopMargin to spare): every batch of measured
// requests it reads the run's summary and, when all are within their half-widths,
// closes the run's Enough channel (executor.Options.Enough). max_duration closes it
// too. Add is called on one goroutine; Enough is asked on another.
type Watch struct {
	p       *plan.Precision
	batch   int                                 // measured requests between two looks
	summary func(run int) (stats.Summary, bool) // a run's figures so far; false: none yet

	mu   sync.Mutex
	runs []*run
}

// run is what the watch knows of one measured run.
type run struct {
	enough   chan struct{}
	closed   bool
	measured int
	// reached is the measured requests at which every figure was precise (0: never);
	// timedOut is set when max_duration ended it.
	reached int
	// widths are the half-widths the run stopped on (nil: it never reached them).
	widths   []float64
	timedOut bool
	timer    *time.Timer
}

// NewWatch watches the runs of a level of concurrency whose first batch of requests
// (the level's requests) is firstBatch; summary gives a run's figures so far.
func NewWatch(p *plan.Precision, firstBatch, concurrency int, summary func(run int) (stats.Summary, bool)) *Watch {
	return &Watch{p: p, batch: max(firstBatch, concurrency, 1), summary: summary}
}

func (w *Watch) run(i int) *run {
	for len(w.runs) <= i {
		w.runs = append(w.runs, &run{enough: make(chan struct{})})
	}
	return w.runs[i]
}

// Enough is executor.Options.Enough: the run's channel, with its max_duration started.
func (w *Watch) Enough(i int) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.run(i)
	if w.p.MaxDuration > 0 && r.timer == nil {
		r.timer = time.AfterFunc(w.p.MaxDuration, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if !r.closed {
				r.timedOut, r.closed = true, true
				close(r.enough)
			}
		})
	}
	return r.enough
}

// Add counts one measured request of run i (warm-up and ramp requests are not
// measured): after each batch of them, it looks.
func (w *Watch) Add(i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.run(i)
	r.measured++
	if r.closed || r.measured%w.batch != 0 {
		return
	}
	s, ok := w.summary(i)
	if !ok {
		return
	}
	if widths := precisionWidths(w.p, s); precise(w.p, widths) {
		r.reached, r.closed, r.widths = r.measured, true, widths
		if r.timer != nil {
			r.timer.Stop()
		}
		close(r.enough)
	}
}

// Stop releases the runs' timers once the level is over.
func (w *Watch) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.runs {
		if r.timer != nil {
			r.timer.Stop()
		}
	}
}

// precisionWidths are the relative half-widths of the block's figures in l (NaN where
// the interval is unbounded).
func precisionWidths(p *plan.Precision, l stats.Summary) []float64 {
	out := make([]float64, len(p.Targets))
	for i, t := range p.Targets {
		out[i] = math.NaN()
		d := precisionDist(&l, t.Dist)
		if d == nil || d.CI == nil {
			continue
		}
		iv, v := d.CI.Mean, d.Mean
		if t.Percentile > 0 {
			iv, _ = d.CI.At(t.Percentile)
			v, _ = d.At(t.Percentile)
		}
		out[i] = iv.HalfWidth(v)
	}
	return out
}

// stopMargin is the share of each asked half-width a run must reach before it stops: the
// requests still in flight then are measured too, and an interval moves a little with
// every value, so a run that stopped at the half-width itself would often leave the row
// just outside it.
const stopMargin = 0.9

func precise(p *plan.Precision, widths []float64) bool {
	for i, t := range p.Targets {
		if !(widths[i] <= stopMargin*t.HalfWidth) { // NaN is not precise
			return false
		}
	}
	return true
}

func precisionDist(l *stats.Summary, name string) *stats.Dist {
	switch name {
	case "ttft":
		return &l.TTFT
	case "tpot":
		return &l.TPOT
	case "itl":
		return &l.ITL
	case "e2e":
		return &l.E2E
	}
	return nil
}

// Note says, for the row, how the runs ended and how precise the row's figures (over
// every run's requests) are: "precision ttft_p50 ±2%: reached in the run, after 820
// requests (the row: ttft_p50 ±1.9%)", or which cap ended them.
func (w *Watch) Note(pooled stats.Summary, interrupted bool) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ends []string
	lo, hi, reached, timedOut, capped := 0, 0, 0, 0, 0
	for _, r := range w.runs {
		switch {
		case r.reached > 0:
			if reached == 0 || r.reached < lo {
				lo = r.reached
			}
			hi = max(hi, r.reached)
			reached++
		case r.timedOut:
			timedOut++
		case !interrupted:
			capped++
		}
	}
	runs := func(n int) string {
		if len(w.runs) == 1 {
			return "the run"
		}
		return fmt.Sprintf("%d of %d runs", n, len(w.runs))
	}
	if reached > 0 {
		after := fmt.Sprintf("%d", lo)
		if hi > lo {
			after = fmt.Sprintf("%d–%d", lo, hi)
		}
		e := fmt.Sprintf("reached in %s, after %s requests", runs(reached), after)
		if len(w.runs) == 1 {
			e += " (" + widthsText(w.p, w.runs[0].widths) + ")"
		}
		ends = append(ends, e)
	}
	if timedOut > 0 {
		ends = append(ends, fmt.Sprintf("not reached in %s: max_duration %s ended it", runs(timedOut), w.p.MaxDuration))
	}
	if capped > 0 {
		ends = append(ends, fmt.Sprintf("not reached in %s: max_requests %d ended it", runs(capped), w.p.MaxRequests))
	}
	if interrupted {
		ends = append(ends, "interrupted")
	}
	return fmt.Sprintf("precision %s: %s; the row, with the requests in flight at the stop: %s", w.p, strings.Join(ends, "; "),
		widthsText(w.p, precisionWidths(w.p, pooled)))
}

// widthsText is "ttft_p50 ±1.9%, tpot_p50 ±1.4%".
func widthsText(p *plan.Precision, widths []float64) string {
	got := make([]string, len(widths))
	for i, t := range p.Targets {
		got[i] = fmt.Sprintf("%s ±%.2f%%", t.Figure, 100*widths[i])
		if math.IsNaN(widths[i]) {
			got[i] = t.Figure + " unbounded"
		}
	}
	return strings.Join(got, ", ")
}

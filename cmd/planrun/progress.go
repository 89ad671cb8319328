package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// progress shows what apply is doing: a progress bar per level on a terminal, a plain
// line every few seconds otherwise (CI logs), nothing but warnings with -quiet. Finished
// requests only bump counters; a ticker renders them, so no request takes a lock.
type progress struct {
	w     io.Writer
	tty   bool
	quiet bool
	every time.Duration

	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	label  string
	total  int
	done   atomic.Int64
	failed atomic.Int64
	last   time.Time
	stop   chan struct{} // closes the level's ticker; nil when none runs
}

// tickEvery is how often the counters are rendered.
const tickEvery = 200 * time.Millisecond

func newProgress(w io.Writer, tty, quiet bool) *progress {
	return &progress{w: w, tty: tty, quiet: quiet, every: 5 * time.Second}
}

func (p *progress) Note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, relPaths(fmt.Sprintf(format, args...)))
}

func (p *progress) StartLevel(cell *plan.Cell, level plan.LoadLevel, requests int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label = cell.ID + " " + cell.Workload.LevelName(level)
	p.total = requests
	p.done.Store(0)
	p.failed.Store(0)
	p.last = time.Now()
	if p.quiet {
		return
	}
	if p.stop != nil {
		close(p.stop)
	}
	p.stop = make(chan struct{})
	go p.tick(p.stop)
	if p.tty {
		p.bar = progressbar.NewOptions(requests,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30),
		)
		return
	}
	fmt.Fprintf(p.w, "%s: %d requests (warm-up included)\n", p.label, requests)
}

// Request counts a finished request. An agent loop's task counts once, at its first
// step, as the level's total (sessions × turns) does; a later step's failure fails it.
func (p *progress) Request(_ *plan.Cell, _ plan.LoadLevel, ev executor.Event) {
	if ev.Step <= 1 {
		p.done.Add(1)
	}
	if ev.Sample.Err != nil {
		p.failed.Add(1)
	}
}

// tick renders the counters until stop closes.
func (p *progress) tick(stop <-chan struct{}) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.stop == stop { // not ended while this tick waited for the lock
				p.render()
			}
			p.mu.Unlock()
		}
	}
}

// render shows the counters: the bar on a terminal, a line every p.every otherwise.
func (p *progress) render() {
	n := p.done.Load()
	if p.bar != nil {
		p.bar.Set(int(n))
		return
	}
	if time.Since(p.last) >= p.every {
		p.last = time.Now()
		fmt.Fprintf(p.w, "%s: %d/%d requests done, %d failed\n", p.label, n, p.total, p.failed.Load())
	}
}

func (p *progress) EndLevel(cell *plan.Cell, row ledger.Row) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	if p.bar != nil {
		p.bar.Set(int(p.done.Load()))
		p.bar.Finish()
		p.bar = nil
	}
	if p.quiet {
		return
	}
	fmt.Fprintf(p.w, "%s %s: %s — TTFT p50 %s, TPOT p50 %s, %s tok/s, %d/%d ok\n",
		cell.ID, cell.Workload.LevelName(plan.LoadLevel{Concurrency: row.Concurrency, RequestRate: row.RequestRate}), row.Status, fmtSeconds(row.TTFT.P50), fmtMillis(row.TPOT.P50),
		fmtNum(row.OutputTokS, 1), row.Succeeded, row.Requests)
}

func fmtSeconds(s float64) string {
	if s != s {
		return "—"
	}
	return fmt.Sprintf("%.3fs", s)
}

func fmtMillis(s float64) string {
	if s != s {
		return "—"
	}
	return fmt.Sprintf("%.1fms", s*1000)
}

func fmtNum(v float64, prec int) string {
	if v != v {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

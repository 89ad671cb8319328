// Package selfcheck watches planrun itself while it measures, so a report can say when
// the client, not the server, may have shaped the figures: the CPU the process used, and
// the Go scheduler's own record of how long goroutines waited to run once they were
// runnable (runtime/metrics /sched/latencies:seconds). A reader goroutine woken by a
// chunk's arrival waits exactly that long before it can stamp the chunk, so this is how
// far behind the readers were.
package selfcheck

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"time"
)

const schedLatencies = "/sched/latencies:seconds"

// Report is what the client did during one window.
type Report struct {
	Wall time.Duration
	// CPU is user+system CPU time of the whole process over the window.
	CPU time.Duration
	// CPUPercent is CPU / wall × 100: 100 means one core fully busy.
	CPUPercent float64
	// Cores is runtime.NumCPU(): CPUPercent near Cores×100 means the client saturated the machine.
	Cores int
	// LagP50, LagP99 and LagMax are how long goroutines waited, runnable, before running
	// (upper bucket bounds of the runtime's histogram, so a little pessimistic).
	LagP50, LagP99, LagMax time.Duration
	// Schedules is how many goroutine wake-ups the figures cover (the runtime samples
	// them, so this is fewer than all wake-ups).
	Schedules uint64
}

// Monitor samples the process while a window runs. Start it with Start, end it with Stop.
type Monitor struct {
	start time.Time
	cpu0  time.Duration
	hist0 *metrics.Float64Histogram
}

// Start begins watching.
func Start() *Monitor {
	return &Monitor{start: time.Now(), cpu0: processCPU(), hist0: readHist()}
}

// Stop ends the window and returns the report.
func (m *Monitor) Stop() Report {
	hist := readHist()
	wall := time.Since(m.start)
	r := Report{Wall: wall, CPU: processCPU() - m.cpu0, Cores: runtime.NumCPU()}
	if wall > 0 {
		r.CPUPercent = float64(r.CPU) / float64(wall) * 100
	}
	if hist == nil || m.hist0 == nil {
		return r
	}
	counts := make([]uint64, len(hist.Counts))
	for i := range counts {
		counts[i] = hist.Counts[i] - m.hist0.Counts[i]
		r.Schedules += counts[i]
	}
	r.LagP50 = quantile(hist.Buckets, counts, r.Schedules, 0.50)
	r.LagP99 = quantile(hist.Buckets, counts, r.Schedules, 0.99)
	r.LagMax = quantile(hist.Buckets, counts, r.Schedules, 1)
	return r
}

func readHist() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s[0].Value.Float64Histogram()
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// quantile returns the upper bound of the bucket holding the q-th wake-up. Buckets has
// one more entry than counts (bucket i spans [Buckets[i], Buckets[i+1])).
func quantile(buckets []float64, counts []uint64, total uint64, q float64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			hi := buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = buckets[i]
			}
			return time.Duration(hi * float64(time.Second))
		}
	}
	return 0
}

// NoteFloor is the least client delay worth a note, whatever its share of the figure: below
// 0.1 ms it is under the run-to-run noise of any real server's TTFT and TPOT (the quickstart's
// tiny CPU model moves by milliseconds between runs), and a 1% share of a 4 ms TTFT (41 µs)
// flagged every row of a quiet run.
const NoteFloor = 100 * time.Microsecond

// Warnings says when the client may have distorted the figures, for delays above NoteFloor. Every chunk's stamp is
// late by the reader's scheduling lag, so a typical (median) lag above 1% of the mean
// TPOT shifts TPOT and ITL by more than 1%; a p99 lag above 10% of it means a tail of
// chunks was stamped late. It also warns when the process used nearly every core, and
// when open-loop or replayed sends ran later than a TPOT behind their schedule. meanTPOT ≤ 0 skips
// the TPOT checks.
func (r Report) Warnings(meanTPOT time.Duration, sendLagMax time.Duration) []string {
	var w []string
	if r.lagInflates(meanTPOT) {
		w = append(w, fmt.Sprintf("client scheduling lag p50 %s is above 1%% of the mean TPOT %s: the client may have inflated TPOT/ITL",
			Readable(r.LagP50), Readable(meanTPOT)))
	} else if meanTPOT > 0 && r.LagP99 > max(meanTPOT/10, NoteFloor) {
		w = append(w, fmt.Sprintf("client scheduling lag p99 %s is above 10%% of the mean TPOT %s: some chunks were stamped late",
			Readable(r.LagP99), Readable(meanTPOT)))
	}
	if r.cpuSaturated() {
		w = append(w, fmt.Sprintf("client CPU %.0f%% of %d cores: the client was saturated", r.CPUPercent, r.Cores))
	}
	if meanTPOT > 0 && sendLagMax > 0 && sendLagMax > meanTPOT {
		w = append(w, fmt.Sprintf("paced sends (open loop or replay) were up to %s late against the schedule, more than the mean TPOT",
			Readable(sendLagMax)))
	}
	return w
}

// Saturated says why the client itself was the limit over the window, or "" when it was
// not: it used nearly every core (above 90% of them), or its typical chunk was stamped
// late by more than 1% of the mean TPOT (the first two of Warnings' rules).
func (r Report) Saturated(meanTPOT time.Duration) string {
	switch {
	case r.cpuSaturated():
		return fmt.Sprintf("client CPU %.0f%% of %d cores", r.CPUPercent, r.Cores)
	case r.lagInflates(meanTPOT):
		return fmt.Sprintf("client scheduling lag p50 %s above 1%% of the mean TPOT %s",
			Readable(r.LagP50), Readable(meanTPOT))
	}
	return ""
}

// Readable is d to 3 significant digits (and whole microseconds), as warnings print a
// duration: 25.1ms, 1.23s, 850µs, not 25.123456ms.
func Readable(d time.Duration) time.Duration {
	step := time.Microsecond
	for a := d.Abs(); a >= 1000*step && step < time.Second; {
		step *= 10
	}
	return d.Round(step)
}

func (r Report) cpuSaturated() bool { return r.Cores > 0 && r.CPUPercent > 90*float64(r.Cores) }

func (r Report) lagInflates(meanTPOT time.Duration) bool {
	return meanTPOT > 0 && r.LagP50 > max(meanTPOT/100, NoteFloor)
}

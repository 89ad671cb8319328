package apply

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/runreport"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
)

// TimelineFile is the run directory's timeline: every measured run of every level in
// slices of time (stats.Timeline), one CSV line a slice, with what the monitors read
// during each (docs/commands.md "The timeline file").
const TimelineFile = "timeline.csv"

// timelineHeader is the timeline file's columns.
var timelineHeader = []string{"cell_id", "concurrency", "request_rate", "run", "resolution_s", "from_s", "to_s", "steady",
	"started", "finished", "in_flight", "output_tokens", "output_tok_s", "ttft_p50_s", "ttft_max_s",
	"server_cpu_cores", "other_cpu_cores", "gpu_used_gb", "gpu_util_pct", "gpu_power_w"}

// recordTimeline writes the level's timelines to the run directory's timeline file and
// adds them to the report's timeline chart.
func (a *applier) recordTimeline(cell *plan.Cell, level plan.LoadLevel, m levelMeasurement) {
	if err := writeTimeline(a.rec.res.RunDir, cell, level, m); err != nil {
		a.note("%s %s: the timeline: %v", cell.ID, level, err)
	}
	s := runreport.TimelineSeries{Label: cell.ID + " " + cell.Workload.LevelName(level)}
	for _, l := range m.Stats.PerRun {
		var pts []runreport.TimelinePoint
		if tl := l.Delivered.Timeline; tl != nil {
			for _, sl := range tl.Slices {
				pts = append(pts, runreport.TimelinePoint{Seconds: (sl.From + sl.To) / 2, TokS: sl.OutputTokS(), InFlight: sl.InFlight, Steady: sl.Steady})
			}
		}
		s.Runs = append(s.Runs, pts)
	}
	a.rec.timeline = append(a.rec.timeline, s)
}

// writeTimeline appends the level's runs' timelines to the run directory's timeline file
// (its header first when new).
func writeTimeline(runDir string, cell *plan.Cell, level plan.LoadLevel, m levelMeasurement) error {
	if runDir == "" {
		return nil
	}
	path := filepath.Join(runDir, TimelineFile)
	_, err := os.Stat(path)
	fresh := errors.Is(err, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if fresh {
		w.Write(timelineHeader)
	}
	for run, l := range m.Stats.PerRun {
		tl := l.Delivered.Timeline
		if tl == nil {
			continue
		}
		for _, s := range tl.Slices {
			from, to := tl.Origin.Add(seconds(s.From)), tl.Origin.Add(seconds(s.To))
			cpu := cpuAt(m.Window.CPU, from, to)
			used, util, power := gpuAt(m.GPU, from, to)
			w.Write([]string{cell.ID, strconv.Itoa(level.Concurrency), num(level.RequestRate), strconv.Itoa(run),
				num(tl.Resolution), num(s.From), num(s.To), strconv.FormatBool(s.Steady),
				strconv.Itoa(s.Started), strconv.Itoa(s.Finished), num(s.InFlight), num(s.OutputTokens), num(s.OutputTokS()),
				num(s.TTFTP50), num(s.TTFTMax), num(cpu.ServerCores), num(cpu.OtherCores), num(used), num(util), num(power)})
		}
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

func num(v float64) string { return ledger.FormatFloat(v) }

// cpuAt is the CPU sampler's interval that covers the slice's middle; NaN figures when
// none does (a slice after the last reading, or no sampler).
func cpuAt(c procmem.CPUSummary, from, to time.Time) procmem.CPUPoint {
	mid := from.Add(to.Sub(from) / 2)
	for _, p := range c.Series {
		if !c.Start.Add(p.At).Before(mid) {
			return p
		}
	}
	nan := math.NaN()
	return procmem.CPUPoint{ServerCores: nan, OtherCores: nan}
}

// gpuAt is the GPUs' memory in use (GB, summed), utilisation (%, mean) and power (W,
// summed) at the first reading at or after the slice's middle; NaN without one.
func gpuAt(g gpu.Summary, from, to time.Time) (used, util, power float64) {
	used, util, power = math.NaN(), math.NaN(), math.NaN()
	if g.Note != "" || len(g.Devices) == 0 {
		return
	}
	mid := from.Add(to.Sub(from) / 2)
	var n float64
	for _, d := range g.Devices {
		for _, p := range d.Series {
			if g.Start.Add(p.At).Before(mid) {
				continue
			}
			if n == 0 {
				used, util, power = 0, 0, 0
			}
			used += float64(p.UsedBytes) / 1e9
			util += float64(p.GPUUtil)
			if d.HasPower {
				power += float64(p.PowerMilliW) / 1000
			}
			n++
			break
		}
	}
	if n > 0 {
		util /= n
	}
	return
}

// sliceCV is the coefficient of variation (%) of the steady slices' output tok/s over a
// level's runs, each slice weighted by its length: how even the steady window was. NaN
// without two steady slices.
func sliceCV(runs []stats.Summary) float64 {
	var w, sum, sq float64
	n := 0
	for _, l := range runs {
		if l.Delivered.Timeline == nil {
			continue
		}
		for _, s := range l.Delivered.Timeline.Slices {
			if s.Steady {
				d, v := s.To-s.From, s.OutputTokS()
				w, sum, sq, n = w+d, sum+d*v, sq+d*v*v, n+1
			}
		}
	}
	if n < 2 || sum <= 0 {
		return math.NaN()
	}
	mean := sum / w
	return 100 * math.Sqrt(max(sq/w-mean*mean, 0)) / mean
}

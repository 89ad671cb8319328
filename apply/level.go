package apply

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/executor"
	"github.com/planrun/planrun/gpu"
	"github.com/planrun/planrun/gpu/serverstats"
	"github.com/planrun/planrun/internal/version"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
	"github.com/planrun/planrun/selfcheck"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/stats"
)

// runLevel measures one concurrency level of a cell and writes its row.
func (a *applier) runLevel(ctx context.Context, cell *plan.Cell, b backends.Backend, proc *servers.Process,
	tmpl backends.Request, prompts *executor.Prompts, cal executor.Calibration, level plan.Level) report.Row {
	w := cell.Workload
	lv := executor.Level{
		Concurrency: level.Concurrency,
		Requests:    w.RequestsPerRun(level.Concurrency),
		WarmupRuns:  w.WarmupRuns,
		RepeatRuns:  w.RepeatRuns,
		RequestRate: level.RequestRate,
		Arrival:     w.Arrival,
		Request:     tmpl,
		Prompts:     prompts,
	}
	if w.Seed != nil {
		lv.Seed = uint64(*w.Seed)
	}
	if a.o.Progress != nil {
		a.o.Progress.StartLevel(cell, level, lv.Requests*(lv.WarmupRuns+lv.RepeatRuns))
	}

	sink := &levelSink{log: a.samples, target: stats.Target{PromptTokens: w.PromptTokens, MaxTokens: w.MaxTokens},
		rec: report.SampleRecord{CellID: cell.ID, Concurrency: level.Concurrency, RequestRate: level.RequestRate}}
	if a.o.Progress != nil {
		sink.progress = func(ev executor.Event) { a.o.Progress.Request(cell, level, ev) }
	}
	opts := executor.Options{Grace: a.o.Grace, Stop: a.o.Stop, OnRequest: sink.add, DropSamples: true}
	var pids []int
	if proc != nil {
		opts.Abort = proc.Exited()
		opts.AbortErr = &backends.Error{Class: backends.ErrServerDied,
			Message: fmt.Sprintf("server %q exited during the cell (log: %s)", proc.Name(), proc.LogPath())}
		pids = groupPIDs(proc.PID())
	}

	// The GPU sampler covers the measured runs only; warm-up runs load the model first so
	// the baseline is taken with it resident.
	var (
		sampler *gpu.Sampler
		watch   *serverWatch
		client  *selfcheck.Monitor
	)
	measure := func() executor.Result {
		if lv.WarmupRuns > 0 {
			warm := lv
			warm.RepeatRuns = 0
			executor.RunLevel(ctx, b, warm, opts)
		}
		if ctx.Err() != nil {
			return executor.Result{Level: lv, Interrupted: true}
		}
		tel := a.telemetryFor(cell)
		tel.Baseline()
		if proc != nil {
			pids = groupPIDs(proc.PID())
		}
		sampler = tel.Start(a.o.SampleInterval, pids)
		watch = a.watchServer(ctx, cell)
		client = selfcheck.Start()
		meas := lv
		meas.WarmupRuns = 0
		return executor.RunLevel(ctx, b, meas, opts)
	}
	started := a.now()
	res := measure()
	var (
		gsum   gpu.Summary
		self   selfcheck.Report
		server serverstats.Report
	)
	if sampler != nil {
		gsum = sampler.Stop()
		self = client.Stop()
		server = watch.stop()
	} else {
		gsum.Note = "no measured run"
	}
	ended := a.now()

	sum := stats.SummarizeRuns(sink.statsRuns(res), sink.target)

	row := report.NewRow()
	row.Plan = planName(a.o.Plan)
	row.PlanPath, row.PlanHash = a.o.Plan.Path, a.o.Plan.Hash
	row.CellID, row.Matrix, row.Model, row.ModelID = cell.ID, cell.Matrix, cell.Model, cell.ModelID
	row.Quantization, row.Tool, row.BackendURL = cell.Quantization, cell.Backend.Addr, report.SafeURL(cell.Backend.URL)
	if cell.Hardware != nil {
		row.Hardware, row.GPU = cell.Hardware.Name, cell.Hardware.GPU
	}
	row.Workload, row.Concurrency, row.RequestRate = w.Name, level.Concurrency, level.RequestRate
	row.MaxTokens = w.MaxTokens
	row.SetStats(sum)
	if cal.Actual > 0 && math.IsNaN(row.PromptTokensActual) {
		row.PromptTokensActual = float64(cal.Actual)
	}
	row.PromptTokensRequested = w.PromptTokens
	setVRAM(&row, gsum)
	if gsum.Note == "" && len(gsum.Devices) > 0 {
		var pts []report.VRAMPoint
		for _, p := range gsum.Devices[0].Series {
			pts = append(pts, report.VRAMPoint{Seconds: p.At.Seconds(), GB: float64(p.UsedBytes) / 1e9})
		}
		a.vram = append(a.vram, report.VRAMSeries{Label: cell.ID + " " + levelName(level), Points: pts})
	}
	row.Version = version.String()
	row.Started, row.Ended = started, ended

	var notes []string
	if n := a.modelNote(cell); n != "" {
		notes = append(notes, n)
	}
	if cal.Note != "" {
		notes = append(notes, cal.Note)
	}
	notes = append(notes, a.serverFigures(ctx, cell, level.Concurrency, &row, gsum, server)...)
	if sampler != nil {
		row.ClientCPUPct = self.CPUPercent
		row.ClientLagP99Ms = float64(self.LagP99) / 1e6
		meanTPOT := time.Duration(row.TPOT.Mean * float64(time.Second))
		if math.IsNaN(row.TPOT.Mean) {
			meanTPOT = 0
		}
		for _, w := range self.Warnings(meanTPOT, maxLag(res)) {
			notes = append(notes, w)
			a.note("%s %s: %s", cell.ID, levelName(level), w)
		}
	}
	if lag := maxLag(res); lag > 0 {
		notes = append(notes, fmt.Sprintf("open loop: max send lag %s", lag.Round(time.Microsecond)))
	}
	switch {
	case res.Interrupted:
		row.Status = report.StatusInterrupted
		notes = append(notes, "interrupted")
	case row.Succeeded == 0:
		row.Status = report.StatusFailed
		notes = append(notes, "every request failed"+firstError(sink.firstErr))
	default:
		row.Status = report.StatusOK
	}
	if w.Goal != nil && row.Status != report.StatusInterrupted {
		row.Goal = report.GoalMet
		if ok, diags := w.MeetsGoal(resultValues(row)); !ok || diags.HasErrors() {
			row.Goal = report.GoalMissed
			why := "goal missed: " + describeValues(w.Goal, resultValues(row))
			if diags.HasErrors() {
				why = "goal missed: " + strings.TrimSpace(diags.Error())
			}
			notes = append(notes, why)
		}
	}
	a.holdAgainstReferences(cell, &row)
	row.Notes = strings.Join(notes, "; ")

	if err := a.samples.Flush(); err != nil {
		a.note("writing raw samples: %v", err)
	}
	if row.Requests > 0 || row.Status != report.StatusInterrupted {
		if err := a.ledger.Append(row); err != nil {
			a.note("writing the CSV ledger: %v", err)
		}
		if err := a.runCSV.Append(row); err != nil {
			a.note("writing the run's CSV: %v", err)
		}
		a.res.Rows = append(a.res.Rows, row)
		if row.Status != report.StatusInterrupted {
			a.checkExpects(cell, row)
		}
	}
	if a.o.Progress != nil {
		a.o.Progress.EndLevel(cell, row)
	}
	return row
}

func firstError(e *backends.Error) string {
	if e == nil {
		return ""
	}
	return ": " + e.Error()
}

func maxLag(res executor.Result) time.Duration {
	var m time.Duration
	for _, r := range res.Runs {
		for _, l := range r.SendLag {
			m = max(m, l)
		}
	}
	return m
}

// setVRAM fills the row's VRAM columns from the sampler's summary: totals over the GPUs
// the machine has, and the server's own processes where NVML attributes memory.
func setVRAM(row *report.Row, g gpu.Summary) {
	if g.Note != "" || len(g.Devices) == 0 {
		row.VRAMSource = g.Note
		if row.VRAMSource == "" {
			row.VRAMSource = "no GPU telemetry"
		}
		return
	}
	var base, proc uint64
	attributed := false
	for _, d := range g.Devices {
		base += d.BaselineUsedBytes
		if d.ProcessAttributed {
			attributed = true
		}
	}
	proc = g.PeakTotalProcessBytes()
	row.VRAMBaselineGB = float64(base) / 1e9
	row.VRAMPeakGB = float64(g.PeakTotalUsedBytes()) / 1e9
	if attributed {
		row.VRAMProcessGB = float64(proc) / 1e9
	}
	row.VRAMSource = g.MemoryAPI
}

package apply

import (
	"context"
	"fmt"

	"github.com/planrun/planrun/apply/precision"
	"github.com/planrun/planrun/apply/saturation"
	"github.com/planrun/planrun/apply/verdict"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/runreport"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/load/traffic"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/stats"
)

// runLevel measures one concurrency level of a cell and writes its row, in three steps:
// measure, build the row from what was measured, record it.
func (a *applier) runLevel(ctx context.Context, cell *plan.Cell, setup *cellSetup, level plan.LoadLevel) ledger.Row {
	m := a.measure(ctx, cell, setup, level)
	if m.AgentFault != "" {
		// Nothing to hold against references or expectations: the row has no figures.
		row := agentFaultRow(cell, level, a.rec.rowContext(), m)
		a.rec.flushRequests()
		a.rec.append(row)
		if a.o.Progress != nil {
			a.o.Progress.EndLevel(cell, row)
		}
		return row
	}
	row := buildRow(cell, level, m, a.rowContext(ctx, cell, level, setup.cal, m))
	a.setServed(cell, setup.proc, m, &row)
	a.record(cell, level, m, &row)
	return row
}

// modelFigures are each mix model's figures over its own measured requests, every run
// pooled, in the mix's order; a name no request went to has zero requests and no figures.
func modelFigures(w *plan.Workload, byModel map[string]*stats.Accumulator, t stats.Target) []ledger.ModelFigures {
	var out []ledger.ModelFigures
	for _, m := range w.Models {
		acc := byModel[m.Name]
		if acc == nil {
			acc = stats.NewAccumulator(t)
		}
		out = append(out, ledger.NewModelFigures(m.Name, m.Weight, acc.Summary(stats.Window{})))
	}
	return out
}

// measure runs the level's warm-up runs, then its measured runs with the monitors
// watching, and summarises them.
func (a *applier) measure(ctx context.Context, cell *plan.Cell, setup *cellSetup, level plan.LoadLevel) levelMeasurement {
	w := cell.Workload
	lv := a.traffic[w].Level(level)
	lv.Request, lv.Prompts, lv.Shapes = setup.tmpl, traffic.LevelPrompts(setup.prompts, a.rec.runID(), level), setup.shapes
	if a.o.Progress != nil {
		measuredRuns := lv.Requests * lv.RepeatRuns
		if p := w.Precision; p != nil && p.MaxRequests > 0 {
			measuredRuns = p.MaxRequests * lv.RepeatRuns // a run may stop before
		}
		a.o.Progress.StartLevel(cell, level, lv.Requests*lv.WarmupRuns+measuredRuns)
	}

	var progress func(executor.Event)
	if a.o.Progress != nil {
		progress = func(ev executor.Event) { a.o.Progress.Request(cell, level, ev) }
	}
	sink := newLevelSink(a.rec.requests, ledger.RequestRecord{CellID: cell.ID, Concurrency: level.Concurrency,
		RequestRate: level.RequestRate, RunID: a.rec.runID(), Host: a.rec.host},
		stats.Target{PromptTokens: w.PromptTokens, MaxTokens: w.MaxTokens, SLO: w.SLO,
			Turns: traffic.SessionTurns(w), Concurrency: closedLoopSlots(w, level), Confidence: w.Confidence}, progress)
	m := levelMeasurement{Started: a.o.Now()}
	if setup.fleet != nil {
		defer fleet.CollectSooner()() // this process only merges records: it holds them in less memory
		for _, info := range setup.fleet.Agents(cell.ID, nil) {
			sink.hosts = append(sink.hosts, info.Host)
		}
	}
	opts := a.executorOptions(setup.proc, sink)
	var watch *precision.Watch
	if p := w.Precision; p != nil {
		watch = precision.NewWatch(p, lv.Requests, level.Concurrency, sink.runSummary)
		sink.consumers = append(sink.consumers, func(ev executor.Event) { // after addRun, which it reads
			if measured(ev) {
				watch.Add(ev.Run)
			}
		})
		opts.Enough, lv.MaxRequests = watch.Enough, p.RunRequests()
		defer watch.Stop()
	}
	sat := watchSaturation(w, sink, &opts) // after the precision watch, whose Enough it joins
	defer sat.Stop()
	m.Cache = a.prepareCache(ctx, cell, setup, level, &lv)
	res := a.runMonitored(ctx, setup, lv, opts, a.levelMonitors(cell, setup.proc), &m)
	m.Window.Runs, m.Window.Stopped = runWindows(res), sat.Note()
	m.Ended = a.o.Now()
	if setup.fleet != nil {
		m.AgentCount, m.ClockBound = cell.Workload.Agents, setup.fleet.Bound()
	}
	if m.AgentFault != "" {
		setup.agentFault = true
		a.note("%s %s: %s", cell.ID, level, m.AgentFault)
	}
	if n := sink.portLimited; len(n) > 0 {
		m.PortNote = portNote(n)
	}

	for _, r := range res.Runs {
		if r.Err != nil {
			a.note("%s %s: the trace stopped before the window's end: %v", cell.ID, level, r.Err)
		}
	}
	m.Stats = stats.SummarizeRuns(sink.statsRuns(res), sink.target)
	m.Models = modelFigures(w, sink.models, sink.target)
	m.Interrupted = res.Interrupted
	if watch != nil {
		m.PrecisionNote = watch.Note(m.Stats.Pooled, m.Interrupted)
	}
	if sink.firstErr != nil {
		m.FirstError = sink.firstErr.Error()
	}
	return m
}

// runMonitored runs the warm-up runs, then starts the monitors, runs the measured runs
// and stops the monitors into m. The monitors cover the measured runs only: warm-up runs
// load the model first, so the GPU baseline is taken with it resident. The runs go out
// from this process, or from the cell's load agents (setup.fleet), whose parts of the
// measured runs and any fault go into m.
func (a *applier) runMonitored(ctx context.Context, setup *cellSetup, lv executor.LevelSpec, opts executor.Options,
	monitors []monitor, m *levelMeasurement) executor.Result {
	run := func(lv executor.LevelSpec) executor.Result {
		if setup.fleet == nil {
			return executor.RunLevel(ctx, setup.backend, lv, opts)
		}
		res, levels, err := setup.fleet.RunLevel(ctx, lv, opts)
		if lv.RepeatRuns > 0 {
			m.Agents = levels
		}
		if err != nil {
			m.AgentFault = err.Error()
		}
		return res
	}
	if lv.WarmupRuns > 0 {
		warm := lv
		warm.RepeatRuns = 0
		run(warm)
	}
	if ctx.Err() != nil || m.AgentFault != "" {
		m.GPU.Note = "no measured run"
		return executor.Result{Level: lv, Interrupted: ctx.Err() != nil}
	}
	for _, mon := range monitors {
		mon.start(ctx)
	}
	meas := lv
	meas.WarmupRuns = 0
	res := run(meas)
	for _, mon := range monitors {
		mon.stop(m)
	}
	m.Monitored = true
	return res
}

// executorOptions hands every finished request to the level's sink (off the requests'
// goroutines; the samples are dropped once the sink has them) and aborts the level when
// the cell's server exits.
func (a *applier) executorOptions(proc *servers.Process, sink *levelSink) executor.Options {
	opts := executor.Options{Grace: a.o.Grace, Stop: a.o.Stop, OnRequest: sink.add, DropSamples: true}
	if proc != nil {
		opts.Abort = proc.Exited()
		opts.AbortErr = &backends.Error{Class: backends.ErrServerDied,
			Message: fmt.Sprintf("server %q exited during the cell (log: %s)", proc.Name(), proc.LogPath())}
	}
	return opts
}

// record holds a level's row against the plan's references and expectations, tells the
// user what the client self-check warns about, and writes the row to the run record
// (the ledgers, the report's rows and charts) and the progress.
func (a *applier) record(cell *plan.Cell, level plan.LoadLevel, m levelMeasurement, row *ledger.Row) {
	if m.GPU.Note == "" {
		// One trace per GPU: a model split over cards shows each card's share.
		for _, d := range m.GPU.Devices {
			var pts []runreport.VRAMPoint
			for _, p := range d.Series {
				pts = append(pts, runreport.VRAMPoint{Seconds: p.At.Seconds(), GB: float64(p.UsedBytes) / 1e9})
			}
			gpu := fmt.Sprintf("GPU %d %s", d.Index, d.Name)
			a.rec.addVRAM(runreport.VRAMSeries{Label: cell.ID + " " + cell.Workload.LevelName(level), GPU: gpu, Points: pts})
		}
	}
	if m.Monitored {
		for _, w := range clientWarnings(*row, m) {
			a.note("%s %s: %s", cell.ID, level, w)
		}
	}
	holdAgainstReferences(a.o.Plan, cell, row)
	a.recordTimeline(cell, level, m)

	a.rec.flushRequests()
	if row.Requests > 0 || row.Status != ledger.StatusInterrupted {
		a.rec.append(*row)
		if row.Status != ledger.StatusInterrupted {
			a.rec.expectFailed(verdict.Expects(a.o.Plan, cell, *row))
		}
	}
	if a.o.Progress != nil {
		a.o.Progress.EndLevel(cell, *row)
	}
}

// recordUnmeasured writes the row of a cell that failed before measuring, at its first
// pending level. Nothing was measured, so no reference or expectation is held against it.
func (a *applier) recordUnmeasured(cell *plan.Cell, level plan.LoadLevel, reason string) {
	a.rec.append(unmeasuredRow(cell, level, a.rec.rowContext(), reason, a.o.Now()))
}

// watchSaturation is the level's stop_when_saturated watch, fed by the sink and joined
// to opts.Enough; nil when the workload does not ask.
func watchSaturation(w *plan.Workload, sink *levelSink, opts *executor.Options) *saturation.Watch {
	if !w.StopWhenSaturated {
		return nil
	}
	sat := saturation.NewWatch(sink.runSummary)
	sink.consumers = append(sink.consumers, func(ev executor.Event) { // after addRun, which it reads
		if measured(ev) {
			sat.Add(ev.Run)
		}
	})
	opts.Enough = sat.Either(opts.Enough)
	return sat
}

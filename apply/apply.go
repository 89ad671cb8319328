// Package apply runs a whole plan: for each selected cell it starts the server the cell
// needs, calibrates the prompt, runs every concurrency level through the executor while
// the GPU sampler runs, turns the samples into result rows, holds them against the
// plan's references and expectations, and writes every output as it goes (CSV ledger,
// the run's own CSV, raw requests.jsonl, Markdown report with charts, manifest.json), so
// a crash loses at most the level in flight.
package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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

// Options configure one apply.
type Options struct {
	Plan  *plan.Plan
	Cells []*plan.Cell // the selected cells, in plan order
	// NewBackend builds the backend of a cell (backends/connect.New in the CLI).
	NewBackend func(backends.Config) (backends.Backend, error)
	// ResultsDir is where run directories go; empty means the directory of the plan's
	// csv output, or <plan dir>/results.
	ResultsDir string
	// Resume is a run directory to continue: levels already complete there are skipped.
	Resume string
	// GPU is the telemetry handle; nil opens NVML (which never fails: without a GPU the
	// rows say why there is no VRAM figure).
	GPU *gpu.Telemetry
	// SampleInterval is the GPU sampling interval (gpu.DefaultInterval when zero).
	SampleInterval time.Duration
	// Grace is how long in-flight requests may finish after an interrupt.
	Grace time.Duration
	// Stop cancels in-flight requests at once (a second Ctrl-C).
	Stop <-chan struct{}
	// Progress receives what happens; nil reports nothing.
	Progress Progress
	// Now is the clock for run directory names and row times; nil means time.Now.
	Now func() time.Time
}

// Progress is told what apply is doing, for progress bars or plain log lines.
type Progress interface {
	// Note is a one-line message (server started, calibration, warnings).
	Note(format string, args ...any)
	// StartLevel: requests is the total of this level, warm-up included.
	StartLevel(cell *plan.Cell, level plan.Level, requests int)
	// Request is called for every finished request (from many goroutines).
	Request(cell *plan.Cell, level plan.Level, ev executor.Event)
	// EndLevel is called with the level's result row.
	EndLevel(cell *plan.Cell, row report.Row)
}

// Result is what an apply produced.
type Result struct {
	RunDir     string
	LedgerPath string
	ReportPath string
	Rows       []report.Row
	Cells      []report.CellStatus
	// ExpectFailures lists every expect condition that did not hold.
	ExpectFailures []ExpectFailure
	Interrupted    bool
}

// Counts returns how many cells ended ok, failed, interrupted and skipped.
func (r *Result) Counts() (ok, failed, interrupted, skipped int) {
	for _, c := range r.Cells {
		switch c.Status {
		case report.StatusOK:
			ok++
		case report.StatusFailed:
			failed++
		case report.StatusInterrupted:
			interrupted++
		default:
			skipped++
		}
	}
	return
}

// ExpectFailure is an expect block whose condition was false (or could not be evaluated)
// for one row.
type ExpectFailure struct {
	Expect      string
	Cell        string
	Concurrency int
	// Condition is the condition's text in the plan, with its file and line.
	Condition string
	Message   string
}

func (f ExpectFailure) String() string {
	return fmt.Sprintf("expect %q failed for %s at concurrency %d: %s; condition: %s", f.Expect, f.Cell, f.Concurrency, f.Message, f.Condition)
}

// Run applies the plan. Cancelling ctx is the first Ctrl-C: no new requests are sent,
// in-flight ones get Grace, everything measured is written and the cell is marked
// interrupted. Run returns an error only when outputs cannot be written at all; failing
// requests and cells are results.
func Run(ctx context.Context, o Options) (*Result, error) {
	a, err := newApplier(o)
	if err != nil {
		return nil, err
	}
	defer a.close()
	return a.run(ctx)
}

type applier struct {
	o        Options
	now      func() time.Time
	res      *Result
	ledger   *report.Ledger
	runCSV   *report.Ledger
	samples  *report.SampleLog
	mdPaths  []string
	language string
	manifest report.Manifest
	done     map[levelKey]report.Row // resumed levels already complete
	tel      *gpu.Telemetry
	ownTel   bool
	mgr      *servers.Manager
	backends map[string]backends.Backend
	probed   map[string]bool
	shapes   map[string]modelShape
	vram     []report.VRAMSeries
}

type levelKey struct {
	cell  string
	level plan.Level
}

func rowKey(r report.Row) levelKey {
	return levelKey{r.CellID, plan.Level{Concurrency: r.Concurrency, RequestRate: r.RequestRate}}
}

func newApplier(o Options) (*applier, error) {
	a := &applier{o: o, now: o.Now, res: &Result{}, done: map[levelKey]report.Row{},
		backends: map[string]backends.Backend{}, probed: map[string]bool{}, shapes: map[string]modelShape{}}
	if a.now == nil {
		a.now = time.Now
	}
	p := o.Plan
	ledgerPath := filepath.Join(p.Dir, "results", "results.csv")
	jsonlPath := ""
	for _, out := range p.Outputs {
		switch out.Kind {
		case "csv":
			ledgerPath = out.Path
		case "markdown":
			a.mdPaths = append(a.mdPaths, out.Path)
			if out.Language != "" {
				a.language = out.Language
			}
		case "jsonl":
			jsonlPath = out.Path
		}
	}
	resultsDir := o.ResultsDir
	if resultsDir == "" {
		resultsDir = filepath.Dir(ledgerPath)
	}
	started := a.now()
	// The ledger first: a ledger refused (e.g. another header) must not leave an empty
	// run directory behind.
	if err := os.MkdirAll(filepath.Dir(ledgerPath), 0o755); err != nil {
		return nil, fmt.Errorf("creating the ledger's directory: %w", err)
	}
	var err error
	if a.ledger, err = report.OpenLedger(ledgerPath); err != nil {
		return nil, err
	}
	runDir := o.Resume
	if runDir == "" {
		if runDir, err = newRunDir(resultsDir, started); err != nil {
			a.close()
			return nil, fmt.Errorf("creating the run directory: %w", err)
		}
	}
	if jsonlPath == "" {
		jsonlPath = filepath.Join(runDir, "requests.jsonl")
	}
	a.res.RunDir, a.res.LedgerPath = runDir, ledgerPath
	a.res.ReportPath = filepath.Join(runDir, "report.md")

	host := report.CollectHost()
	a.manifest = report.Manifest{Environment: host, Started: started}
	if o.Resume != "" {
		if err := a.loadResume(); err != nil {
			a.close()
			return nil, err
		}
	}
	a.manifest.PlanrunVersion = version.String()
	a.manifest.PlanPath, a.manifest.PlanHash = p.Path, p.Hash

	if a.runCSV, err = report.OpenLedger(filepath.Join(runDir, "results.csv")); err != nil {
		a.close()
		return nil, err
	}
	if a.samples, err = report.OpenSampleLog(jsonlPath); err != nil {
		a.close()
		return nil, err
	}
	a.tel = o.GPU
	if a.tel == nil {
		a.tel, a.ownTel = gpu.Open(), true
	}
	info := a.tel.Info()
	for _, d := range info.Devices {
		a.manifest.GPUs = append(a.manifest.GPUs, fmt.Sprintf("%s (%.0f GB)", d.Name, float64(d.TotalBytes)/1e9))
	}
	a.manifest.Driver, a.manifest.CUDA = info.DriverVersion, info.CUDADriverVersion
	a.mgr = servers.NewManager(servers.Options{})
	return a, nil
}

// newRunDir creates the run's directory, named for its start time; a second run in the
// same second gets a suffix rather than mixing its files with the first's.
func newRunDir(parent string, started time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(parent, started.UTC().Format("2006-01-02T15-04-05"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// loadResume reads the run directory's manifest and rows: the plan must be the same (same
// hash), and levels whose rows are complete (ok or failed) are not run again.
func (a *applier) loadResume() error {
	dir := a.o.Resume
	m, err := report.ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return fmt.Errorf("cannot resume %s: %w", dir, err)
	}
	if m.PlanHash != a.o.Plan.Hash {
		return fmt.Errorf("cannot resume %s: it was run from a different plan (hash %.12s, this plan %.12s); start a new run instead", dir, m.PlanHash, a.o.Plan.Hash)
	}
	a.manifest = m
	rows, err := report.ReadLedger(filepath.Join(dir, "results.csv"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot resume %s: %w", dir, err)
	}
	for _, r := range rows {
		if r.Status == report.StatusOK || r.Status == report.StatusFailed {
			a.done[rowKey(r)] = r
		}
	}
	return nil
}

func (a *applier) close() {
	if a.mgr != nil {
		a.mgr.Close()
	}
	if a.samples != nil {
		a.samples.Close()
	}
	if a.runCSV != nil {
		a.runCSV.Close()
	}
	if a.ledger != nil {
		a.ledger.Close()
	}
	if a.ownTel && a.tel != nil {
		a.tel.Close()
	}
}

func (a *applier) note(format string, args ...any) {
	if a.o.Progress != nil {
		a.o.Progress.Note(format, args...)
	}
}

func (a *applier) run(ctx context.Context) (*Result, error) {
	if note := a.tel.Note(); note != "" {
		a.note("%s", note)
	}
	a.checkHardware()
	// Cells of a resumed run keep their status unless they are run again.
	status := map[string]report.CellStatus{}
	for _, c := range a.manifest.Cells {
		status[c.ID] = c
	}
	a.manifest.Cells = nil
	for _, c := range a.o.Cells {
		st, ok := status[c.ID]
		if !ok {
			st = report.CellStatus{ID: c.ID, Status: "pending"}
		}
		a.manifest.Cells = append(a.manifest.Cells, st)
	}
	for _, r := range a.done {
		a.res.Rows = append(a.res.Rows, r)
	}
	sortRows(a.res.Rows, a.o.Cells)
	if err := a.writeManifest(); err != nil {
		return nil, err
	}

	for i, cell := range a.o.Cells {
		if ctx.Err() != nil {
			a.res.Interrupted = true
			break
		}
		st := a.runCell(ctx, cell)
		a.manifest.Cells[i] = st
		if st.Status == report.StatusInterrupted {
			a.res.Interrupted = true
		}
		if err := a.writeManifest(); err != nil {
			return a.res, err
		}
		if err := a.writeReport(); err != nil {
			return a.res, err
		}
	}
	a.mgr.Close()
	a.manifest.Ended = a.now()
	a.res.Cells = a.manifest.Cells
	if err := a.writeManifest(); err != nil {
		return a.res, err
	}
	return a.res, a.writeReport()
}

// runCell runs every level of one cell and returns its status.
func (a *applier) runCell(ctx context.Context, cell *plan.Cell) report.CellStatus {
	st := report.CellStatus{ID: cell.ID, Status: report.StatusOK}
	w := cell.Workload
	var todo []plan.Level
	for _, lv := range w.Levels() {
		if r, ok := a.done[levelKey{cell.ID, lv}]; ok {
			if r.Status == report.StatusFailed {
				st.Status = report.StatusFailed
			}
			if r.Goal == report.GoalMissed {
				break // the sweep ended here before the interruption
			}
			continue
		}
		todo = append(todo, lv)
	}
	if len(todo) == 0 {
		a.note("%s: already complete in %s, skipped", cell.ID, a.res.RunDir)
		return st
	}

	fail := func(msg string) report.CellStatus {
		a.note("%s: %s", cell.ID, msg)
		st.Status, st.Notes = report.StatusFailed, msg
		return st
	}

	var proc *servers.Process
	if cell.Server != nil {
		spec := serverSpec(cell.Server)
		if cur := a.mgr.Current(); cur == nil || cur.Name() != spec.Name {
			a.note("starting server %q: %s", spec.Name, strings.Join(spec.Command, " "))
		}
		p, err := a.mgr.Acquire(ctx, spec)
		if err != nil {
			if ctx.Err() != nil {
				st.Status = report.StatusInterrupted
				return st
			}
			return fail(fmt.Sprintf("server %q did not start: %v", spec.Name, err))
		}
		proc = p
		if a.manifest.ServerStartup == nil {
			a.manifest.ServerStartup = map[string]string{}
		}
		a.manifest.ServerStartup[spec.Name] = p.StartupTime().Round(time.Millisecond).String()
	}

	b, err := a.backend(cell)
	if err != nil {
		return fail(err.Error())
	}
	a.probe(ctx, cell, b)
	if err := a.ensureModel(ctx, cell); err != nil {
		return fail(err.Error())
	}

	tmpl := backends.Request{
		Model:          cell.ModelID,
		MaxTokens:      w.MaxTokens,
		ForceMaxTokens: w.ForceMaxTokens,
		Temperature:    w.Temperature,
		Seed:           w.Seed,
	}
	prompts := &executor.Prompts{Text: w.Prompt, Shared: w.SharedPrefix, Salt: cell.ID}
	cal := executor.Calibrate(ctx, b, tmpl, prompts, w.PromptTokens)
	if cal.Actual > 0 {
		a.note("%s: prompt calibrated to %d tokens by the server's count (requested %d, %d words, %d probes)%s",
			cell.ID, cal.Actual, cal.Requested, cal.Words, cal.Probes, noteSuffix(cal.Note))
	} else {
		a.note("%s: prompt not calibrated: %s", cell.ID, cal.Note)
	}

	for _, lv := range todo {
		if ctx.Err() != nil {
			st.Status = report.StatusInterrupted
			break
		}
		row := a.runLevel(ctx, cell, b, proc, tmpl, prompts, cal, lv)
		switch row.Status {
		case report.StatusInterrupted:
			st.Status = report.StatusInterrupted
		case report.StatusFailed:
			if st.Status == report.StatusOK {
				st.Status = report.StatusFailed
				st.Notes = row.Notes
			}
		}
		if row.Status == report.StatusInterrupted {
			break
		}
		if row.Goal == report.GoalMissed {
			a.note("%s: %s", cell.ID, capacityNote(w, a.res.Rows, cell.ID))
			break
		}
	}
	return st
}

// capacityNote says where a goal sweep ended: the last level that met the goal, with
// its throughput (the capacity at that goal), or that none did.
func capacityNote(w *plan.Workload, rows []report.Row, cellID string) string {
	var best *report.Row
	for i := range rows {
		r := &rows[i]
		if r.CellID == cellID && r.Goal == report.GoalMet {
			best = r
		}
	}
	if best == nil {
		return fmt.Sprintf("no level met the goal of workload %q; the sweep stopped at its first level", w.Name)
	}
	return fmt.Sprintf("goal of workload %q missed after %s: capacity at the goal is %s, %.1f output tok/s, %.2f req/s",
		w.Name, levelName(plan.Level{Concurrency: best.Concurrency, RequestRate: best.RequestRate}), levelName(plan.Level{Concurrency: best.Concurrency, RequestRate: best.RequestRate}), best.OutputTokS, best.RequestsPerSec)
}

func levelName(l plan.Level) string {
	if l.RequestRate > 0 {
		return fmt.Sprintf("c=%d rate=%g/s", l.Concurrency, l.RequestRate)
	}
	return fmt.Sprintf("c=%d", l.Concurrency)
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return ": " + n
}

func (a *applier) backend(cell *plan.Cell) (backends.Backend, error) {
	addr := cell.Backend.Addr
	if b, ok := a.backends[addr]; ok {
		return b, nil
	}
	b, err := a.o.NewBackend(cell.Backend.Config())
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", addr, err)
	}
	a.backends[addr] = b
	return b, nil
}

// probe records the server's version and the model's presence once per backend and
// model, for the manifest and as an early, clear message when the model is missing.
func (a *applier) probe(ctx context.Context, cell *plan.Cell, b backends.Backend) {
	key := cell.Backend.Addr + " " + cell.ModelID
	if a.probed[key] {
		return
	}
	a.probed[key] = true
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pr := b.Probe(pctx, []string{cell.ModelID})
	if pr.Version != "" {
		if a.manifest.ServerVersions == nil {
			a.manifest.ServerVersions = map[string]string{}
		}
		a.manifest.ServerVersions[cell.Backend.Addr] = pr.Version
	}
	if d, ok := pr.ModelDigests[cell.ModelID]; ok && d != "" {
		if a.manifest.ModelDigests == nil {
			a.manifest.ModelDigests = map[string]string{}
		}
		a.manifest.ModelDigests[key] = d
	}
	for _, p := range pr.Problems {
		a.note("%s: %s", cell.Backend.Addr, p)
	}
}

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

	var (
		writeMu  sync.Mutex
		writeErr error
	)
	opts := executor.Options{
		Grace: a.o.Grace,
		Stop:  a.o.Stop,
		OnRequest: func(ev executor.Event) {
			writeMu.Lock()
			if err := a.samples.Write(report.SampleRecord{CellID: cell.ID, Run: ev.Run, Concurrency: level.Concurrency, RequestRate: level.RequestRate, Warmup: ev.Warmup, Sample: *ev.Sample}); err != nil && writeErr == nil {
				writeErr = err
			}
			writeMu.Unlock()
			if a.o.Progress != nil {
				a.o.Progress.Request(cell, level, ev)
			}
		},
	}
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

	runs := make([]stats.Run, len(res.Runs))
	for i, r := range res.Runs {
		runs[i] = stats.Run{Samples: r.Samples, Window: stats.Window{Start: r.Start, End: r.End}}
	}
	sum := stats.SummarizeRuns(runs, stats.Target{PromptTokens: w.PromptTokens, MaxTokens: w.MaxTokens})

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
		notes = append(notes, "every request failed"+firstError(res))
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

	writeMu.Lock()
	if writeErr != nil {
		a.note("writing raw samples: %v", writeErr)
	}
	writeMu.Unlock()
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

func firstError(res executor.Result) string {
	for _, r := range res.Runs {
		for _, s := range r.Samples {
			if s.Err != nil {
				return ": " + s.Err.Error()
			}
		}
	}
	return ""
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

func planName(p *plan.Plan) string {
	base := filepath.Base(p.Path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func serverSpec(s *plan.Server) servers.Spec {
	return servers.Spec{Name: s.Name, Command: s.Command, Env: s.Env, Dir: s.Dir, ReadyURL: s.ReadyURL,
		ReadyTimeout: s.ReadyTimeout, StopSignal: s.StopSignal, Grace: s.Grace, Log: s.Log, Setup: s.Setup}
}

// sortRows orders rows by cell (plan order) then concurrency, for a stable report.
func sortRows(rows []report.Row, cells []*plan.Cell) {
	order := map[string]int{}
	for i, c := range cells {
		order[c.ID] = i
	}
	sort.SliceStable(rows, func(i, j int) bool {
		oi, oj := order[rows[i].CellID], order[rows[j].CellID]
		if oi != oj {
			return oi < oj
		}
		return rows[i].Concurrency < rows[j].Concurrency
	})
}

func (a *applier) writeManifest() error {
	return report.WriteManifest(filepath.Join(a.res.RunDir, "manifest.json"), a.manifest)
}

// writeReport re-renders the Markdown report (and charts) from every row so far.
func (a *applier) writeReport() error {
	rows := latestRows(a.res.Rows)
	sortRows(rows, a.o.Cells)
	charts, err := report.WriteCharts(a.res.RunDir, rows, a.vram)
	if err != nil {
		a.note("charts: %v", err)
	}
	r := report.Report{Title: planName(a.o.Plan), Language: a.language, Rows: rows, Env: a.manifest.Environment, Charts: charts}
	paths := append([]string{a.res.ReportPath}, a.mdPaths...)
	for _, p := range paths {
		if err := writeFileAtomic(p, func(w io.Writer) error { return report.WriteMarkdown(w, r) }); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// latestRows keeps, per cell and level, the last row: an interrupted level that was run
// again on resume shows once, with its complete figures.
func latestRows(rows []report.Row) []report.Row {
	idx := map[levelKey]int{}
	var out []report.Row
	for _, r := range rows {
		k := rowKey(r)
		if i, ok := idx[k]; ok {
			out[i] = r
			continue
		}
		idx[k] = len(out)
		out = append(out, r)
	}
	return out
}

func writeFileAtomic(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

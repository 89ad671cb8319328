// Package apply runs a whole plan. Each selected cell runs here or, when its hardware has
// a slurm block, as a batch job whose rows it merges. Here, it starts the server the
// cell needs, calibrates the prompt, runs every concurrency level through the executor
// while the GPU sampler runs, turns the samples into result rows and holds them against
// the plan's references and expectations. It writes the run directory as it goes: each
// level's rows to the CSV ledgers and its requests to requests.jsonl, then after each
// cell manifest.json and the reports (report.md, report.html, summary.json, the charts),
// so a crash loses at most the level in flight.
package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/batch"
	"github.com/planrun/planrun/executor"
	"github.com/planrun/planrun/gpu"
	"github.com/planrun/planrun/internal/version"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/traffic"
)

// Options configure one apply.
type Options struct {
	Plan  *plan.Plan
	Cells []*plan.Cell // the selected cells, in plan order
	// NewBackend builds the backend of a cell (backends/connect.New in the CLI).
	NewBackend func(backends.Config) (backends.Backend, error)
	// ResultsDir is where run directories go, and the ledger (results.csv) when the plan
	// has no csv output; empty means the directory of the plan's csv output, or
	// <plan dir>/results.
	ResultsDir string
	// Name replaces the plan's file name in the new run directory's name
	// (<name>-<start time>); it must pass CheckRunName.
	Name string
	// Resume is a run directory to continue: levels already complete there are skipped.
	Resume string
	// RunDir is the run directory of a Slurm job's node side (planrun apply -run-dir): it
	// is used as is, created when missing and resumed when it holds a manifest of this
	// plan. Every cell runs on this machine, and the plan's own outputs (CSV ledger,
	// Markdown, JSONL) are left to the coordinator, which merges the job's rows.
	RunDir string
	// GPU is the telemetry handle; nil opens NVML (which never fails: without a GPU the
	// rows say why there is no VRAM figure).
	GPU *gpu.Telemetry
	// SampleInterval is the GPU sampling interval (gpu.DefaultInterval when zero).
	SampleInterval time.Duration
	// Grace is how long in-flight requests may finish after an interrupt.
	Grace time.Duration
	// Stop cancels in-flight requests at once (a second Ctrl-C).
	Stop <-chan struct{}
	// Vars and VarFiles are the -var and -var-file values the plan was loaded with: a
	// Slurm job loads the same plan with the same values on its node.
	Vars, VarFiles []string
	// Jobs tunes how batch jobs (Slurm's) are followed.
	Jobs JobOptions
	// Schedulers run the cells of the placements they are given for, as batch jobs;
	// nil means the registered ones (placements.go): Slurm's.
	Schedulers map[plan.Placement]batch.Scheduler
	// Progress receives what happens; nil reports nothing.
	Progress Progress
	// Quiet keeps routine news (server started, prompt calibrated, model found) from
	// Progress; warnings and failures still reach it.
	Quiet bool
	// Now is the clock for run directory names and row times; nil means time.Now.
	Now func() time.Time
	// Command is the command line that started the run ("planrun", "apply", flags...),
	// kept in manifest.json with the values of sensitive -var flags redacted.
	Command []string
}

// Progress is told what apply is doing, for progress bars or plain log lines.
type Progress interface {
	// Note is a one-line message (server started, calibration, warnings).
	Note(format string, args ...any)
	// StartLevel: requests is the total of this level, warm-up included.
	StartLevel(cell *plan.Cell, level plan.LoadLevel, requests int)
	// Request is called for every finished request, one at a time from the level's
	// drain goroutine, never on a request's own: keep it cheap (bump counters), since a
	// slow one backs up the queue of finished requests.
	Request(cell *plan.Cell, level plan.LoadLevel, ev executor.Event)
	// EndLevel is called with the level's result row.
	EndLevel(cell *plan.Cell, row ledger.Row)
}

// Result is what an apply produced.
type Result struct {
	RunDir     string
	LedgerPath string
	ReportPath string
	Rows       []ledger.Row
	Cells      []ledger.CellStatus
	// ExpectFailures lists every expect condition that did not hold.
	ExpectFailures []ExpectFailure
	Interrupted    bool
}

// Counts returns how many cells ended ok, failed, interrupted and skipped.
func (r *Result) Counts() (ok, failed, interrupted, skipped int) {
	for _, c := range r.Cells {
		switch c.Status {
		case ledger.StatusOK:
			ok++
		case ledger.StatusFailed:
			failed++
		case ledger.StatusInterrupted:
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
	// Level is the level that failed, every axis of it (plan.LevelOf its row), and
	// LevelName what messages call it (the workload's LevelName: "c=4 rate=2/s").
	Level     plan.LoadLevel
	LevelName string
	// Condition is the condition's text in the plan, with its file and line.
	Condition string
	Message   string
}

func (f ExpectFailure) String() string {
	level := f.LevelName
	if level == "" {
		level = f.Level.String()
	}
	return fmt.Sprintf("expect %q failed for %s at %s: %s; condition: %s", f.Expect, f.Cell, level, f.Message, f.Condition)
}

// Run applies the plan. Cancelling ctx is the first Ctrl-C: no new requests are sent,
// in-flight ones get Grace, everything measured is written and the cell is marked
// interrupted. Run returns an error only when outputs cannot be written at all; failing
// requests and cells are results.
func Run(ctx context.Context, o Options) (*Result, error) {
	scheds := schedulers(o)
	if err := checkSchedulers(o, scheds); err != nil {
		return nil, err
	}
	a, err := newApplier(o)
	if err != nil {
		return nil, err
	}
	a.schedulers = scheds
	defer a.close()
	return a.run(ctx)
}

type applier struct {
	o        Options
	now      func() time.Time
	res      *Result
	ledger   *ledger.Ledger
	runCSV   *ledger.Ledger
	samples  *ledger.RequestLog
	declared map[string][]string // the output blocks' paths by kind (none on a Slurm node)
	manifest ledger.Manifest
	host     string
	done     map[levelKey]ledger.Row // resumed levels already complete
	tel      *gpu.Telemetry
	ownTel   bool
	mgr      *servers.Manager
	known    backendSet
	served   map[string]servedQuant // what each backend's model is served as (quant.go)
	vram     []report.VRAMSeries
	// traffic holds each workload's traffic, read before anything is sent (readDatasets).
	traffic map[*plan.Workload]*traffic.Workload
	// schedulers run the cells placed on them as batch jobs (jobs.go).
	schedulers map[plan.Placement]batch.Scheduler
}

type levelKey struct {
	cell  string
	level plan.LoadLevel
}

func rowKey(r ledger.Row) levelKey {
	return levelKey{r.CellID, plan.LoadLevel{Concurrency: r.Concurrency, RequestRate: r.RequestRate,
		Inputs: r.Inputs, InputTokens: r.InputTokensPerInput}}
}

func newApplier(o Options) (*applier, error) {
	if o.Name != "" {
		if err := CheckRunName(o.Name); err != nil {
			return nil, err
		}
	}
	a := &applier{o: o, now: o.Now, res: &Result{}, done: map[levelKey]ledger.Row{}, known: newBackendSet(),
		served: map[string]servedQuant{}}
	if a.now == nil {
		a.now = time.Now
	}
	p := o.Plan
	ledgerPath, jsonlPath := a.readOutputs()
	resultsDir := o.ResultsDir
	switch {
	case resultsDir == "" && ledgerPath == "":
		resultsDir = filepath.Join(p.Dir, "results")
	case resultsDir == "":
		resultsDir = filepath.Dir(ledgerPath)
	}
	if ledgerPath == "" { // no output "csv": the ledger lies with the run directories
		ledgerPath = filepath.Join(resultsDir, ledger.ResultsFile)
	}
	started := a.now()
	var err error
	runDir := o.Resume
	if o.RunDir != "" {
		if runDir, err = a.nodeRunDir(); err != nil {
			return nil, err
		}
		ledgerPath, jsonlPath, a.declared = "", "", nil
	} else {
		// The ledger first: a ledger refused (e.g. another header) must not leave an
		// empty run directory behind.
		if err := os.MkdirAll(filepath.Dir(ledgerPath), 0o755); err != nil {
			return nil, fmt.Errorf("creating the ledger's directory: %w", err)
		}
		if a.ledger, err = ledger.OpenLedger(ledgerPath); err != nil {
			return nil, err
		}
	}
	if runDir == "" {
		if runDir, err = newRunDir(resultsDir, a.runName(), started); err != nil {
			a.close()
			return nil, fmt.Errorf("creating the run directory: %w", err)
		}
	}
	if jsonlPath == "" {
		jsonlPath = filepath.Join(runDir, ledger.RequestsFile)
	}
	a.res.RunDir, a.res.LedgerPath = runDir, ledgerPath
	a.res.ReportPath = filepath.Join(runDir, ledger.MarkdownFile)

	host := ledger.CollectHost()
	a.manifest = ledger.Manifest{Environment: host, Started: started}
	a.host = host.Host // a resumed run's rows say where they were measured, not where it began
	if a.o.Resume != "" {
		if err := a.loadResume(); err != nil {
			a.close()
			return nil, err
		}
	}
	if a.manifest.RunID == "" { // a new run, or one from before run ids
		a.manifest.RunID = newRunID(runDir)
	}
	if o.Resume == "" {
		a.manifest.Command = redactCommand(o.Command, p.Variables)
		if err := a.copyPlan(); err != nil {
			a.close()
			return nil, fmt.Errorf("copying the plan into the run directory: %w", err)
		}
	}
	a.manifest.PlanrunVersion = version.String()
	a.manifest.PlanPath, a.manifest.PlanHash = p.Path, p.Hash
	if err := a.readDatasets(); err != nil {
		a.close()
		return nil, err
	}

	if a.runCSV, err = ledger.OpenLedger(filepath.Join(runDir, ledger.ResultsFile)); err != nil {
		a.close()
		return nil, err
	}
	if a.samples, err = ledger.OpenRequestLog(jsonlPath); err != nil {
		a.close()
		return nil, err
	}
	a.openTelemetry()
	a.mgr = servers.NewManager(servers.Options{})
	return a, nil
}

// readOutputs takes the paths of the plan's output blocks by kind, and returns the
// ledger's path ("" without an output "csv": results.csv in the results directory) and
// the raw-sample log's ("" for the run directory's); the last block of a kind wins.
func (a *applier) readOutputs() (ledgerPath, jsonlPath string) {
	a.declared = map[string][]string{}
	for _, out := range a.o.Plan.Outputs {
		a.declared[out.Kind] = append(a.declared[out.Kind], out.Path)
	}
	last := func(paths []string) string {
		if len(paths) == 0 {
			return ""
		}
		return paths[len(paths)-1]
	}
	return last(a.declared[ledger.LedgerOutput]), last(a.declared[ledger.RequestsOutput])
}

// openTelemetry opens NVML unless the caller gave a handle, and records the GPUs, the
// driver and CUDA in the manifest.
func (a *applier) openTelemetry() {
	a.tel = a.o.GPU
	if a.tel == nil {
		a.tel, a.ownTel = gpu.Open(), true
	}
	info := a.tel.Info()
	for _, d := range info.Devices {
		a.manifest.GPUs = append(a.manifest.GPUs, fmt.Sprintf("%s (%.0f GB)", d.Name, float64(d.TotalBytes)/1e9))
	}
	a.manifest.Driver, a.manifest.CUDA = info.DriverVersion, info.CUDADriverVersion
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

// info is a note that all went as planned: left out with Options.Quiet.
func (a *applier) info(format string, args ...any) {
	if !a.o.Quiet {
		a.note(format, args...)
	}
}

func (a *applier) run(ctx context.Context) (*Result, error) {
	if note := a.tel.Note(); note != "" {
		a.note("%s", note)
	}
	a.checkHardware()
	// Cells of a resumed run keep their status unless they are run again.
	status := map[string]ledger.CellStatus{}
	for _, c := range a.manifest.Cells {
		status[c.ID] = c
	}
	a.manifest.Cells = nil
	for _, c := range a.o.Cells {
		st, ok := status[c.ID]
		if !ok {
			st = ledger.CellStatus{ID: c.ID, Status: "pending"}
		}
		a.manifest.Cells = append(a.manifest.Cells, st)
	}
	for _, r := range a.done {
		a.res.Rows = append(a.res.Rows, r)
	}
	a.noteSkipped()
	sortRows(a.res.Rows, a.o.Cells)
	if err := a.writeManifest(); err != nil {
		return nil, err
	}

	jobs := a.submitJobs(ctx)
	if err := a.writeManifest(); err != nil {
		return nil, err
	}
	for i, cell := range a.o.Cells {
		if a.scheduler(cell) != nil {
			continue // a batch job runs it
		}
		if ctx.Err() != nil {
			a.res.Interrupted = true
			break
		}
		st := a.runCell(ctx, cell)
		a.manifest.Cells[i] = st
		if st.Status == ledger.StatusInterrupted {
			a.res.Interrupted = true
		}
		if err := a.writeManifest(); err != nil {
			return a.res, err
		}
		if err := a.writeReport(); err != nil {
			return a.res, err
		}
		a.mergeArrived(jobs)
	}
	a.mgr.Close()
	a.waitJobs(jobs)
	a.manifest.Ended = a.now()
	a.res.Cells = a.manifest.Cells
	if err := a.writeManifest(); err != nil {
		return a.res, err
	}
	return a.res, a.writeReport()
}

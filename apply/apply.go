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
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/apply/qualityphase"
	"github.com/planrun/planrun/apply/rundir"
	"github.com/planrun/planrun/apply/served"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/traffic"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
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
	// (<name>-<start time>); it must pass rundir.CheckName.
	Name string
	// Resume is a run directory to continue: levels already complete there are skipped.
	Resume string
	// RunDir is the run directory of a batch job's node side (planrun apply -run-dir): it
	// is used as is, created when missing and resumed when it holds a manifest of this
	// plan. Every cell runs on this machine, and the plan's own outputs (CSV ledger,
	// Markdown, JSONL) are left to the coordinator, which merges the job's rows.
	RunDir string
	// Getenv reads the environment a node-side run's scheduler gave it (the job it is
	// in: Slurm's SLURM_JOB_ID, Kubernetes' JOB_COMPLETION_INDEX); nil means os.Getenv.
	Getenv func(string) string
	// GPU is the telemetry handle; nil opens NVML (which never fails: without a GPU the
	// rows say why there is no VRAM figure).
	GPU *gpu.Telemetry
	// SampleInterval is the GPU sampling interval (gpu.DefaultInterval when zero).
	SampleInterval time.Duration
	// PowercapRoot is where a rapl power source reads RAPL's counters
	// (power.SysfsPowercap when empty): a test's fake tree.
	PowercapRoot string
	// Grace is how long in-flight requests may finish after an interrupt.
	Grace time.Duration
	// Stop cancels in-flight requests at once (a second Ctrl-C).
	Stop <-chan struct{}
	// Vars and VarFiles are the -var and -var-file values the plan was loaded with: a
	// Slurm job loads the same plan with the same values on its node.
	Vars, VarFiles []string
	// Jobs tunes how batch jobs are followed.
	Jobs JobOptions
	// Schedulers run the cells of the placements they are given for, as batch jobs;
	// nil means the registered ones (placements.go).
	Schedulers map[plan.Placement]placement.Scheduler
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
	// AgentCommand runs one load agent on this machine (a workload's agents = N > 1):
	// the planrun binary and its "agent" argument; nil means this executable's.
	AgentCommand []string
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
	// Decisions are the answers of the plan's decision blocks over the run's rows.
	Decisions []ledger.Decision
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

// Run applies the plan. Cancelling ctx is the first Ctrl-C: no new requests are sent,
// in-flight ones get Grace, everything measured is written and the cell is marked
// interrupted. Run returns an error only when outputs cannot be written at all; failing
// requests and cells are results.
//
// Three parts do the work: the run record (run.go) owns the run directory, the
// coordinator (jobs.go) runs the cells placed on a batch scheduler as jobs and merges
// their rows, and the applier runs the other cells here. Both write through the record.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Name != "" {
		if err := rundir.CheckName(o.Name); err != nil {
			return nil, err
		}
	}
	if err := planRefuses(o.Cells); err != nil {
		return nil, err
	}
	scheds := schedulers(o)
	if err := checkSchedulers(o, scheds); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	note := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress.Note(format, args...)
		}
	}
	// The traffic first: a malformed dataset stops the run before any file is made.
	tr, datasets, err := readTraffic(o.Cells, note)
	if err != nil {
		return nil, err
	}
	// However the run ends, the schedulers release what they hold: no Kubernetes object of
	// the run is left behind by an error, a panic or a second Ctrl-C.
	defer closeSchedulers(scheds, note)
	rec, err := openRun(o, o.Now, note)
	if err != nil {
		return nil, err
	}
	defer rec.close()
	for _, d := range datasets {
		rec.recordDataset(d.name, d.run)
	}
	a := newApplier(o, rec, tr)
	defer a.close()
	co := newCoordinator(rec, scheds, o)

	if n := a.tel.Note(); n != "" {
		note("%s", n)
	}
	a.checkHardware()
	if err := rec.begin(); err != nil {
		return nil, err
	}
	co.submit(ctx)
	if err := rec.writeManifest(); err != nil {
		return nil, err
	}
	for _, cell := range o.Cells {
		if co.runs(cell) {
			continue
		}
		if ctx.Err() != nil {
			rec.interrupt()
			break
		}
		st := a.runCell(ctx, cell)
		rec.setCell(st)
		if st.Status == ledger.StatusInterrupted {
			rec.interrupt()
		}
		if err := rec.writeManifest(); err != nil {
			return rec.res, err
		}
		if err := rec.writeReport(); err != nil {
			return rec.res, err
		}
		co.mergeArrived()
	}
	a.mgr.Close()
	co.wait()
	return rec.end()
}

// newApplier opens NVML unless the caller gave a handle (recording the GPUs, the driver
// and CUDA in the run record) and the server manager.
func newApplier(o Options, rec *runRecord, tr map[*plan.Workload]*traffic.Workload) *applier {
	a := &applier{o: o, rec: rec, known: newBackendSet(), served: map[string]served.Quant{}, traffic: tr,
		job: inJob(o)}
	a.quality = qualityphase.New(o.Cells, rec.res.RunDir, a.note, a.info)
	a.tel = o.GPU
	if a.tel == nil {
		a.tel, a.ownTel = gpu.Open(), true
	}
	rec.recordGPUs(a.tel.Info())
	a.mgr = servers.NewManager(servers.Options{})
	return a
}

// planRefuses runs the plan's own checks (plan.CheckCells, the ones validate runs) over
// the cells given: what the plan alone refuses is refused here too, before anything
// starts, and never found by apply after a server has started.
func planRefuses(cells []*plan.Cell) error {
	var msgs []string
	for _, d := range plan.CheckCells(cells) {
		if d.Severity != hcl.DiagError {
			continue
		}
		at := ""
		if d.Subject != nil {
			at = d.Subject.String() + ": "
		}
		msgs = append(msgs, fmt.Sprintf("%s%s: %s", at, d.Summary, d.Detail))
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("the plan's checks refuse its cells (nothing was started or sent):\n%s", strings.Join(msgs, "\n"))
}

package apply

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planrun/planrun/apply/cellsettings"
	"github.com/planrun/planrun/apply/rundir"
	"github.com/planrun/planrun/apply/verdict"
	"github.com/planrun/planrun/internal/version"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/runreport"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
)

// runRecord is the run directory and everything written into it: the manifest, the
// run's rows and expect failures (its Result), the CSV ledger and the run's own CSV, the
// request log, the reports and charts, and the levels a resumed run already holds.
// Both the cell runner (applier) and the batch-job coordinator write the run through
// it, from one goroutine. It is opened by openRun, which undoes what it opened when a
// later step fails, and closed by close.
type runRecord struct {
	plan  *plan.Plan
	cells []*plan.Cell // the selected cells, in plan order
	now   func() time.Time
	note  func(format string, args ...any)

	res      *Result
	ledger   *ledger.Ledger // the CSV ledger; nil on a batch job's node (the coordinator merges its rows)
	runCSV   *ledger.Ledger // the run directory's results.csv
	requests *ledger.RequestLog
	declared map[string][]string // the output blocks' paths by kind (none on a job's node)
	manifest ledger.Manifest
	host     string                  // the machine the rows are measured on
	done     map[levelKey]ledger.Row // resumed levels already complete
	vram     []runreport.VRAMSeries  // the VRAM chart's traces
	timeline []runreport.TimelineSeries
}

// openRun opens the run's files: the CSV ledger first (a ledger refused, e.g. for
// another header, leaves no empty run directory behind), then the run directory (new,
// resumed with Options.Resume, or a batch job's Options.RunDir), the plan's copy, the
// run's CSV and the request log. On any failure it closes what it opened.
func openRun(o Options, now func() time.Time, note func(string, ...any)) (rec *runRecord, err error) {
	r := &runRecord{plan: o.Plan, cells: o.Cells, now: now, note: note, res: &Result{}, done: map[levelKey]ledger.Row{}}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	ledgerPath, jsonlPath := r.readOutputs()
	resultsDir := o.ResultsDir
	switch {
	case resultsDir == "" && ledgerPath == "":
		resultsDir = filepath.Join(o.Plan.Dir, "results")
	case resultsDir == "":
		resultsDir = filepath.Dir(ledgerPath)
	}
	if ledgerPath == "" { // no output "csv": the ledger lies with the run directories
		ledgerPath = filepath.Join(resultsDir, ledger.ResultsFile)
	}
	started := now()
	runDir, resume := o.Resume, o.Resume
	if o.RunDir != "" {
		// A batch job's node: the directory is used as is, and resumed (as -resume
		// would) when an earlier attempt of the job left a manifest there.
		runDir = o.RunDir
		if err := os.MkdirAll(runDir, 0o755); err != nil {
			return nil, fmt.Errorf("creating the run directory: %w", err)
		}
		if _, err := os.Stat(filepath.Join(runDir, ledger.ManifestFile)); err == nil {
			resume = runDir
		}
		ledgerPath, jsonlPath, r.declared = "", "", nil
	} else {
		if err := os.MkdirAll(filepath.Dir(ledgerPath), 0o755); err != nil {
			return nil, fmt.Errorf("creating the ledger's directory: %w", err)
		}
		if r.ledger, err = ledger.OpenLedger(ledgerPath); err != nil {
			return nil, err
		}
	}
	if runDir == "" {
		if runDir, err = rundir.New(resultsDir, rundir.Name(o.Name, o.Plan), started); err != nil {
			return nil, fmt.Errorf("creating the run directory: %w", err)
		}
	}
	if jsonlPath == "" {
		jsonlPath = filepath.Join(runDir, ledger.RequestsFile)
	}
	r.res.RunDir, r.res.LedgerPath = runDir, ledgerPath
	r.res.ReportPath = filepath.Join(runDir, ledger.MarkdownFile)

	host := ledger.CollectHost()
	r.manifest = ledger.Manifest{Environment: host, Started: started}
	r.host = host.Host // a resumed run's rows say where they were measured, not where it began
	if resume != "" {
		if err := r.loadResume(resume); err != nil {
			return nil, err
		}
	}
	if r.manifest.RunID == "" { // a new run, or one from before run ids
		r.manifest.RunID = rundir.ID(runDir)
	}
	if o.Resume == "" {
		r.manifest.Command = rundir.RedactCommand(o.Command, o.Plan.Variables)
		files, vars, err := rundir.CopyPlan(o.Plan, runDir)
		if err != nil {
			return nil, fmt.Errorf("copying the plan into the run directory: %w", err)
		}
		r.manifest.PlanFiles, r.manifest.Variables = files, vars
	}
	r.manifest.PlanrunVersion = version.String()
	r.manifest.PlanPath, r.manifest.PlanHash = o.Plan.Path, o.Plan.Hash

	if r.runCSV, err = ledger.OpenLedger(filepath.Join(runDir, ledger.ResultsFile)); err != nil {
		return nil, err
	}
	if r.requests, err = ledger.OpenRequestLog(jsonlPath); err != nil {
		return nil, err
	}
	return r, nil
}

// readOutputs takes the paths of the plan's output blocks by kind, and returns the
// ledger's path ("" without an output "csv": results.csv in the results directory) and
// the raw-sample log's ("" for the run directory's); the last block of a kind wins.
func (r *runRecord) readOutputs() (ledgerPath, jsonlPath string) {
	r.declared = map[string][]string{}
	for _, out := range r.plan.Outputs {
		r.declared[out.Kind] = append(r.declared[out.Kind], out.Path)
	}
	last := func(paths []string) string {
		if len(paths) == 0 {
			return ""
		}
		return paths[len(paths)-1]
	}
	return last(r.declared[ledger.LedgerOutput]), last(r.declared[ledger.RequestsOutput])
}

// loadResume reads the run directory's manifest and rows: the plan must be the same (same
// hash), and levels whose rows are complete (ok, or failed after measuring) are not run
// again.
func (r *runRecord) loadResume(dir string) error {
	m, err := ledger.ReadManifest(filepath.Join(dir, ledger.ManifestFile))
	if err != nil {
		return fmt.Errorf("cannot resume %s: %w", dir, err)
	}
	if m.PlanHash != r.plan.Hash {
		return fmt.Errorf("cannot resume %s: it was run from a different plan (hash %.12s, this plan %.12s); start a new run instead", dir, m.PlanHash, r.plan.Hash)
	}
	r.manifest = m
	rows, err := ledger.ReadLedger(filepath.Join(dir, ledger.ResultsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot resume %s: %w", dir, err)
	}
	for _, row := range rows {
		// A cell that failed before measuring (its server was down, say) is tried again.
		if row.Status == ledger.StatusOK || row.Status == ledger.StatusFailed && row.Requests > 0 {
			r.done[rowKey(row)] = row
		}
	}
	return nil
}

func (r *runRecord) close() {
	if r.requests != nil {
		r.requests.Close()
	}
	if r.runCSV != nil {
		r.runCSV.Close()
	}
	if r.ledger != nil {
		r.ledger.Close()
	}
}

// begin lists the selected cells in the manifest (a resumed run's keep their status
// until they run again), takes the rows a resumed run already holds, says which levels
// it skips, and writes the manifest.
func (r *runRecord) begin() error {
	status := map[string]ledger.CellStatus{}
	for _, c := range r.manifest.Cells {
		status[c.ID] = c
	}
	r.manifest.Cells = nil
	for _, c := range r.cells {
		st, ok := status[c.ID]
		if !ok {
			st = ledger.CellStatus{ID: c.ID, Status: "pending"}
		}
		r.manifest.Cells = append(r.manifest.Cells, st)
	}
	for _, row := range r.done {
		r.res.Rows = append(r.res.Rows, row)
	}
	r.noteSkipped()
	sortRows(r.res.Rows, r.cells)
	return r.writeManifest()
}

// end stamps the run's end and writes the manifest and the reports a last time.
func (r *runRecord) end() (*Result, error) {
	r.manifest.Ended = r.now()
	r.res.Cells = r.manifest.Cells
	if err := r.writeManifest(); err != nil {
		return r.res, err
	}
	return r.res, r.writeReport()
}

// noteSkipped says, cell by cell, which levels a resumed run skips as already complete.
func (r *runRecord) noteSkipped() {
	for _, cell := range r.cells {
		var names []string
		for _, lv := range cell.Workload.Levels() {
			if _, ok := r.done[levelKey{cell.ID, lv}]; ok {
				names = append(names, cell.Workload.LevelName(lv))
			}
		}
		if len(names) > 0 {
			r.note("resume: %s: skipping %s, already complete", cell.ID, strings.Join(names, ", "))
		}
	}
}

// pending returns the levels of the cell still to run, and the cell's status so far:
// levels a resumed run already completed count towards it and are not run again.
func (r *runRecord) pending(cell *plan.Cell) ([]plan.LoadLevel, ledger.CellStatus) {
	st := ledger.CellStatus{ID: cell.ID, Status: ledger.StatusOK}
	var todo []plan.LoadLevel
	for _, lv := range cell.Workload.Levels() {
		if row, ok := r.done[levelKey{cell.ID, lv}]; ok {
			if row.Status == ledger.StatusFailed {
				st.Status = ledger.StatusFailed
			}
			if endsSweep(cell.Workload, row) {
				break // the sweep ended here before the interruption
			}
			continue
		}
		todo = append(todo, lv)
	}
	return todo, st
}

// doneLevels copies the levels a resumed run already holds, for a job's rows to skip.
func (r *runRecord) doneLevels() map[levelKey]bool {
	seen := make(map[levelKey]bool, len(r.done))
	for k := range r.done {
		seen[k] = true
	}
	return seen
}

// rows are the run's rows so far, resumed ones included.
func (r *runRecord) rows() []ledger.Row { return r.res.Rows }

// runID is the run's id, which every row and request record carries.
func (r *runRecord) runID() string { return r.manifest.RunID }

// rowContext is the part of a row's context that is the same for every row of the run.
func (r *runRecord) rowContext() rowContext {
	return rowContext{Plan: rundir.PlanName(r.plan), PlanPath: r.plan.Path, PlanHash: r.plan.Hash, Version: version.String(),
		RunID: r.manifest.RunID, Host: r.host}
}

// append writes a row to both ledgers and the run's rows; a ledger that cannot be
// written is reported and the run goes on (the run's rows still reach the report).
func (r *runRecord) append(row ledger.Row) {
	r.writeLedgers(row)
	r.res.Rows = append(r.res.Rows, row)
}

// hold adds a row to the run's rows (and so to the reports) without writing it to the
// ledgers yet, and returns its index for row: a batch job's rows are written once the
// job has ended and given them its final state.
func (r *runRecord) hold(row ledger.Row) int {
	r.res.Rows = append(r.res.Rows, row)
	return len(r.res.Rows) - 1
}

// row is the run's row i, to change before it is written.
func (r *runRecord) row(i int) *ledger.Row { return &r.res.Rows[i] }

// writeLedgers writes a row to the CSV ledger and the run's CSV. A batch job's node has no
// ledger: the coordinator merges its rows.
func (r *runRecord) writeLedgers(row ledger.Row) {
	if r.ledger != nil {
		if err := r.ledger.Append(row); err != nil {
			r.note("writing the CSV ledger: %v", err)
		}
	}
	if err := r.runCSV.Append(row); err != nil {
		r.note("writing the run's CSV: %v", err)
	}
}

// expectFailed records the expect conditions a row failed, and says each.
func (r *runRecord) expectFailed(fs []ExpectFailure) {
	for _, f := range fs {
		r.res.ExpectFailures = append(r.res.ExpectFailures, f)
		r.note("%s", f)
	}
}

// interrupt marks the run interrupted.
func (r *runRecord) interrupt() { r.res.Interrupted = true }

// setCell sets a cell's status in the manifest.
func (r *runRecord) setCell(st ledger.CellStatus) {
	for i := range r.manifest.Cells {
		if r.manifest.Cells[i].ID == st.ID {
			r.manifest.Cells[i] = st
		}
	}
}

// flushRequests writes the request log's buffered records out.
func (r *runRecord) flushRequests() {
	if err := r.requests.Flush(); err != nil {
		r.note("writing raw samples: %v", err)
	}
}

// mergeRequests appends a batch job's request log to the run's, a line at a time; each
// record joins this run, as its row did.
func (r *runRecord) mergeRequests(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var rec ledger.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return err
		}
		rec.RunID = r.manifest.RunID
		if err := r.requests.Write(rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return r.requests.Flush()
}

// What the manifest records of the machine, the servers, the models and the datasets.

// recordGPUs records the GPUs NVML sees, the driver and CUDA.
func (r *runRecord) recordGPUs(info gpu.Info) {
	for _, d := range info.Devices {
		r.manifest.GPUs = append(r.manifest.GPUs, fmt.Sprintf("%s (%.0f GB)", d.Name, float64(d.TotalBytes)/1e9))
	}
	r.manifest.Driver, r.manifest.CUDA = info.DriverVersion, info.CUDADriverVersion
}

// warn keeps a warning about the run's machine in the manifest.
func (r *runRecord) warn(w string) { r.manifest.Warnings = append(r.manifest.Warnings, w) }

// recordDataset records a dataset's file, digest and rows.
func (r *runRecord) recordDataset(name string, d ledger.DatasetRun) {
	setIn(&r.manifest.Datasets, name, d)
}

// recordServer notes in the manifest how a plan-managed server was started, and, once
// its backend's probe has told it, the version the server at addr reported.
func (r *runRecord) recordServer(spec servers.Spec, addr string) {
	if r.manifest.Servers == nil {
		r.manifest.Servers = map[string]ledger.ServerRun{}
	}
	s := r.manifest.Servers[spec.Name]
	s.Command, s.Dir, s.Setup = spec.Command, spec.Dir, spec.Setup
	s.EnvNames = nil
	for name := range spec.Env {
		s.EnvNames = append(s.EnvNames, name)
	}
	slices.Sort(s.EnvNames)
	if v := r.manifest.ServerVersions[addr]; addr != "" && v != "" {
		s.Version = v
	}
	r.manifest.Servers[spec.Name] = s
}

// recordStartup records how long a plan-managed server took to start.
func (r *runRecord) recordStartup(server string, d time.Duration) {
	setIn(&r.manifest.ServerStartup, server, d.Round(time.Millisecond).String())
}

// recordVersion records the version the server behind a backend reported.
func (r *runRecord) recordVersion(addr, v string) { setIn(&r.manifest.ServerVersions, addr, v) }

// recordBuild records what the engine of the server behind a backend said its build uses.
func (r *runRecord) recordBuild(addr, b string) { setIn(&r.manifest.ServerBuilds, addr, b) }

// Models are keyed "<backend address> <model id>".

// recordModel records what an Ollama server showed of a model, and its digest.
func (r *runRecord) recordModel(key string, info ledger.ModelInfo) {
	setIn(&r.manifest.Models, key, info)
	if info.Digest != "" {
		r.recordDigest(key, info.Digest)
	}
}

// model is what recordModel recorded for key.
func (r *runRecord) model(key string) (ledger.ModelInfo, bool) {
	info, ok := r.manifest.Models[key]
	return info, ok
}

// recordDigest records a model's digest: the server's, or planrun's of the weights.
func (r *runRecord) recordDigest(key, d string) { setIn(&r.manifest.ModelDigests, key, d) }

// recordRoot records the weights an OpenAI-protocol server says it loaded (vLLM's root).
func (r *runRecord) recordRoot(key, root string) { setIn(&r.manifest.ModelRoots, key, root) }

// root is what recordRoot recorded for key.
func (r *runRecord) root(key string) string { return r.manifest.ModelRoots[key] }

// Batch jobs: the coordinator's entries in the manifest.

// recordAgents records a cell's load agents in the manifest, in place of any an earlier
// attempt of the cell (a resumed run's) recorded.
func (r *runRecord) recordAgents(agents []ledger.AgentRun) {
	if len(agents) == 0 {
		return
	}
	cell := agents[0].Cell
	r.manifest.Agents = slices.DeleteFunc(r.manifest.Agents, func(a ledger.AgentRun) bool { return a.Cell == cell })
	r.manifest.Agents = append(r.manifest.Agents, agents...)
}

// addJob lists a batch job in the manifest and returns its index there, for job.
func (r *runRecord) addJob(j ledger.BatchJob) int {
	r.manifest.Jobs = append(r.manifest.Jobs, j)
	return len(r.manifest.Jobs) - 1
}

// job is the manifest's entry of a batch job, to change in place.
func (r *runRecord) job(i int) *ledger.BatchJob { return &r.manifest.Jobs[i] }

// mergeNode takes what a batch job's node recorded of its servers and models.
func (r *runRecord) mergeNode(nm ledger.Manifest) {
	mergeInto(&r.manifest.ServerVersions, nm.ServerVersions)
	mergeInto(&r.manifest.ServerBuilds, nm.ServerBuilds)
	mergeInto(&r.manifest.ModelDigests, nm.ModelDigests)
	mergeInto(&r.manifest.ModelRoots, nm.ModelRoots)
	cells := map[string]bool{}
	for _, a := range nm.Agents {
		cells[a.Cell] = true
	}
	r.manifest.Agents = slices.DeleteFunc(r.manifest.Agents, func(a ledger.AgentRun) bool { return cells[a.Cell] })
	r.manifest.Agents = append(r.manifest.Agents, nm.Agents...)
}

func mergeInto(dst *map[string]string, src map[string]string) {
	for k, v := range src {
		setIn(dst, k, v)
	}
}

// addVRAM adds a level's traces to the VRAM chart.
func (r *runRecord) addVRAM(s ...runreport.VRAMSeries) { r.vram = append(r.vram, s...) }

// The manifest and the reports, rewritten whole after each cell and job event.

func (r *runRecord) writeManifest() error {
	for i := range r.manifest.Cells {
		for _, c := range r.cells {
			if c.ID == r.manifest.Cells[i].ID {
				r.manifest.Cells[i].Settings = cellsettings.Of(c)
			}
		}
	}
	return ledger.WriteManifest(filepath.Join(r.res.RunDir, ledger.ManifestFile), r.manifest)
}

// writeReport re-renders every report of report.Outputs (Markdown, HTML, summary.json)
// and the charts from every row so far: each kind's file in the run directory, and
// each path the plan's output blocks of that kind name.
func (r *runRecord) writeReport() error {
	rows := latestRows(r.res.Rows)
	sortRows(rows, r.cells)
	summary := r.summary(rows)
	charts, err := runreport.WriteCharts(r.res.RunDir, rows, r.vram)
	if err != nil {
		r.note("charts: %v", err)
	}
	decided, err := runreport.WriteDecisionCharts(r.res.RunDir, summary.Decisions, rows)
	if err != nil {
		r.note("charts: %v", err)
	}
	inside, err := runreport.WriteTimelineCharts(r.res.RunDir, r.timeline)
	if err != nil {
		r.note("charts: %v", err)
	}
	charts = append(charts, inside...)
	rep := runreport.Report{Title: rundir.PlanName(r.plan), Rows: rows, Env: r.manifest.Environment, Charts: append(charts, decided...),
		Run: r.manifest.RunID, Started: r.manifest.Started, Summary: summary}
	rep.Language, rep.Percentiles = reportChoices(r.plan.Outputs)
	for _, c := range r.manifest.Cells {
		if c.Capacity != nil {
			rep.Capacities = append(rep.Capacities, *c.Capacity)
		}
	}
	for _, out := range runreport.Outputs {
		if out.Write == nil {
			continue // appended to as the run goes
		}
		paths := r.declared[out.Name]
		if out.RunFile != "" {
			paths = append([]string{filepath.Join(r.res.RunDir, out.RunFile)}, paths...)
		}
		for _, p := range paths {
			if err := ledger.WriteFileAtomic(p, func(w io.Writer) error { return out.Write(w, rep) }); err != nil {
				return fmt.Errorf("writing %s: %w", p, err)
			}
		}
	}
	return nil
}

// summary is summary.json's document: the run's plan, environment, cells and rows.
func (r *runRecord) summary(rows []ledger.Row) ledger.Summary {
	s := ledger.NewSummary(rundir.PlanName(r.plan), r.manifest, rows)
	s.Outcome = r.outcome()
	s.Decisions = verdict.Decisions(r.plan, rows)
	r.res.Decisions = s.Decisions
	for _, f := range r.res.ExpectFailures {
		s.ExpectFailures = append(s.ExpectFailures, f.String())
	}
	return s
}

// outcome is the run's outcome so far, as summary.json states it.
func (r *runRecord) outcome() string {
	if r.res.Interrupted {
		return ledger.OutcomeInterrupted
	}
	failed := len(r.res.ExpectFailures) > 0
	for _, c := range r.manifest.Cells {
		switch c.Status {
		case ledger.StatusInterrupted:
			return ledger.OutcomeInterrupted
		case ledger.StatusFailed:
			failed = true
		case "pending":
			return ledger.OutcomeRunning
		}
	}
	switch {
	case failed:
		return ledger.OutcomeFailed
	case r.manifest.Ended.IsZero():
		return ledger.OutcomeRunning
	}
	return ledger.OutcomeComplete
}

type levelKey struct {
	cell  string
	level plan.LoadLevel
}

func rowKey(r ledger.Row) levelKey {
	return levelKey{r.CellID, plan.LoadLevel{Concurrency: r.Concurrency, RequestRate: r.RequestRate,
		Inputs: r.Inputs, InputTokens: r.InputTokensPerInput}}
}

// sortRows orders rows by cell (plan order) then concurrency, for a stable report.
func sortRows(rows []ledger.Row, cells []*plan.Cell) {
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

// latestRows keeps, per cell and level, the last row: an interrupted level that was run
// again on resume shows once, with its complete figures.
func latestRows(rows []ledger.Row) []ledger.Row {
	idx := map[levelKey]int{}
	var out []ledger.Row
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

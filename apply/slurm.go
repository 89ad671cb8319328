package apply

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/slurm"
)

// SlurmOptions tune how the coordinator follows its Slurm jobs; zero values take the
// defaults.
type SlurmOptions struct {
	// Poll is how often each job's state and rows are read (default 2s).
	Poll time.Duration
	// SharedTimeout is how long a running job may take to show that its node sees the
	// run directory (default 2m).
	SharedTimeout time.Duration
	// RowsTimeout is how long a running job may go without a new row before it is
	// cancelled and its unfinished cells fail (default 1h).
	RowsTimeout time.Duration
}

func (o SlurmOptions) withDefaults() SlurmOptions {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.SharedTimeout <= 0 {
		o.SharedTimeout = 2 * time.Minute
	}
	if o.RowsTimeout <= 0 {
		o.RowsTimeout = time.Hour
	}
	return o
}

// onSlurm says whether this apply submits the cell as a Slurm job; on a job's node
// (Options.RunDir) every cell runs here.
func (a *applier) onSlurm(c *plan.Cell) bool {
	return a.o.RunDir == "" && c.Hardware != nil && c.Hardware.Placement() == plan.PlaceSlurm
}

// checkSlurm fails, naming the hardware block, when a selected cell is placed on Slurm
// but this machine cannot submit jobs: nothing is sent then.
func checkSlurm(o Options) error {
	if o.RunDir != "" {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range o.Cells {
		h := c.Hardware
		if h == nil || h.Placement() != plan.PlaceSlurm || seen[h.Name] {
			continue
		}
		seen[h.Name] = true
		if err := slurm.CheckSbatch(h.Name); err != nil {
			return err
		}
	}
	return nil
}

// slurmJob is one batch job as the coordinator follows it. The follower goroutine owns
// status and seen; the rest is read and written by the applier's goroutine only.
type slurmJob struct {
	spec   slurm.JobSpec
	id     string
	cells  []*plan.Cell
	total  int // levels to run
	rowIdx []int
	line   string
	status slurm.Status
	entry  int // index into manifest.SlurmJobs
}

// jobEvent is what a follower tells the applier: the job's latest status, rows that
// appeared since the last event, and, once, that the job ended.
type jobEvent struct {
	job    *slurmJob
	status slurm.Status
	rows   []ledger.Row
	done   bool
	reason string // why planrun ended the job (unshared run directory, no rows), or ""
	// interrupted: the job was cancelled because the run was (the first Ctrl-C).
	interrupted bool
	note        string
}

// slurmRun is the set of jobs an apply submitted.
type slurmRun struct {
	jobs   []*slurmJob
	events chan jobEvent
	open   int // jobs whose end has not been merged yet
}

// submitSlurm submits one job per Slurm hardware block (or per cell) for the selected
// cells with levels still to run, and starts following each. A job sbatch refuses fails
// its cells with sbatch's message; the others go on.
func (a *applier) submitSlurm(ctx context.Context) *slurmRun {
	sr := &slurmRun{events: make(chan jobEvent, 16)}
	var cells []*plan.Cell
	for _, c := range a.o.Cells {
		if todo, _ := a.pendingLevels(c); a.onSlurm(c) && len(todo) > 0 {
			cells = append(cells, c)
		} else if a.onSlurm(c) {
			a.note("%s: already complete in %s, skipped", c.ID, a.res.RunDir)
		}
	}
	specs, err := slurm.NewJobs(a.o.Plan.Path, cells, a.o.Vars, a.o.VarFiles, a.res.RunDir)
	if err != nil {
		for _, c := range cells {
			a.setCellStatus(ledger.CellStatus{ID: c.ID, Status: ledger.StatusFailed, Notes: err.Error()})
		}
		return sr
	}
	byID := map[string]*plan.Cell{}
	for _, c := range cells {
		byID[c.ID] = c
	}
	for _, spec := range specs {
		j := &slurmJob{spec: spec, entry: len(a.manifest.SlurmJobs)}
		for _, id := range spec.CellIDs {
			c := byID[id]
			j.cells = append(j.cells, c)
			todo, _ := a.pendingLevels(c)
			j.total += len(todo)
		}
		a.manifest.SlurmJobs = append(a.manifest.SlurmJobs, ledger.SlurmJob{Name: spec.Name, Hardware: spec.Hardware,
			Dir: spec.Dir, Cells: spec.CellIDs, State: "SUBMITTING"})
		jr := newJobRows(spec.Dir, a.doneLevels()) // before the job can write a row
		if j.id, err = slurm.Submit(ctx, spec); err != nil {
			a.failJob(j, err.Error())
			continue
		}
		a.manifest.SlurmJobs[j.entry].ID = j.id
		a.manifest.SlurmJobs[j.entry].Log = spec.LogPath(j.id)
		a.note("job %s %s: submitted (%d cells, %d levels; log %s)", j.id, spec.Name, len(j.cells), j.total, spec.LogPath(j.id))
		sr.jobs = append(sr.jobs, j)
		sr.open++
		go a.follow(ctx, j, jr, sr.events)
	}
	return sr
}

// doneLevels copies the levels a resumed run already holds, for a follower to skip.
func (a *applier) doneLevels() map[levelKey]bool {
	seen := make(map[levelKey]bool, len(a.done))
	for k := range a.done {
		seen[k] = true
	}
	return seen
}

// mergeArrived merges what the jobs reported since the last call, without waiting.
func (a *applier) mergeArrived(sr *slurmRun) {
	for sr != nil && sr.open > 0 {
		select {
		case ev := <-sr.events:
			a.mergeJobEvent(sr, ev)
		default:
			return
		}
	}
}

// waitSlurm merges the jobs' rows until every job has ended; a second Ctrl-C (Stop)
// returns at once.
func (a *applier) waitSlurm(sr *slurmRun) {
	for sr.open > 0 {
		select {
		case ev := <-sr.events:
			a.mergeJobEvent(sr, ev)
		case <-a.o.Stop:
			a.res.Interrupted = true
			return
		}
	}
}

// mergeJobEvent writes what a follower reported: a progress line when the job's state
// or row count changed, its new rows into the report, and, once the job has ended, its
// rows with their final state into the ledgers, failed rows for levels it never ran,
// and its cells' statuses into the manifest.
func (a *applier) mergeJobEvent(sr *slurmRun, ev jobEvent) {
	j := ev.job
	j.status = ev.status
	if ev.note != "" {
		a.note("job %s %s: %s", j.id, j.spec.Name, ev.note)
	}
	for _, r := range ev.rows {
		// The row joins this run: its id is the run's; Host stays the node that measured it.
		r.RunID = a.manifest.RunID
		r.SlurmJob, r.SlurmNode = j.id, j.status.Node
		j.rowIdx = append(j.rowIdx, len(a.res.Rows))
		a.res.Rows = append(a.res.Rows, r)
		if c := j.cell(r.CellID); c != nil && r.Status != ledger.StatusInterrupted {
			a.checkExpects(c, r)
		}
	}
	if line := fmt.Sprintf("%s, rows %d of %d", j.status.Line(j.spec.Name), len(j.rowIdx), j.total); line != j.line {
		j.line = line
		a.note("%s", line)
	}
	m := &a.manifest.SlurmJobs[j.entry]
	m.Node, m.State, m.ExitCode = j.status.Node, j.status.State.String(), j.status.ExitCode
	if ev.done {
		sr.open--
		a.res.Interrupted = a.res.Interrupted || ev.interrupted
		a.endJob(j, ev.reason, ev.interrupted)
	}
	if err := a.writeManifest(); err != nil {
		a.note("writing the manifest: %v", err)
	}
	if err := a.writeReport(); err != nil {
		a.note("writing the report: %v", err)
	}
}

func (j *slurmJob) cell(id string) *plan.Cell {
	for _, c := range j.cells {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// endJob settles an ended job: its final state goes into each of its rows, which are
// then appended to the ledgers; levels it did not run become failed rows naming the
// state and the log (or interrupted, when the run was); cells take the status the node
// gave them.
func (a *applier) endJob(j *slurmJob, reason string, interrupted bool) {
	state := j.status.State
	log := j.spec.LogPath(j.id)
	why := reason
	if why == "" {
		why = fmt.Sprintf("slurm job %s ended %s before this level ran (see %s)", j.id, state, log)
		if state == slurm.Completed {
			why = fmt.Sprintf("slurm job %s ended COMPLETED without writing this level's row (see %s)", j.id, log)
		}
	}
	interrupted = interrupted && reason == ""
	ran := map[levelKey]bool{}
	for _, i := range j.rowIdx {
		ran[rowKey(a.res.Rows[i])] = true
	}
	for _, c := range j.cells {
		todo, _ := a.pendingLevels(c)
		for _, lv := range todo {
			if ran[levelKey{c.ID, lv}] || interrupted {
				continue
			}
			r := a.jobFailedRow(c, lv, why)
			r.SlurmJob, r.SlurmNode = j.id, j.status.Node
			j.rowIdx = append(j.rowIdx, len(a.res.Rows))
			a.res.Rows = append(a.res.Rows, r)
		}
	}
	for _, i := range j.rowIdx {
		r := &a.res.Rows[i]
		r.SlurmState = state.String()
		a.appendLedgers(*r)
	}
	a.settleCells(j, interrupted, why)
	if err := a.mergeSamples(filepath.Join(j.spec.Dir, "requests.jsonl")); err != nil {
		a.note("job %s %s: merging its raw samples: %v", j.id, j.spec.Name, err)
	}
	m := &a.manifest.SlurmJobs[j.entry]
	m.Notes = reason
	if nm, err := ledger.ReadManifest(filepath.Join(j.spec.Dir, "manifest.json")); err == nil {
		m.GPUs = nm.GPUs
		mergeInto(&a.manifest.ServerVersions, nm.ServerVersions)
		mergeInto(&a.manifest.ModelDigests, nm.ModelDigests)
	}
}

// settleCells gives each of the job's cells its status: the node's own (from its
// manifest) when the node finished the cell, else failed with why, or interrupted.
func (a *applier) settleCells(j *slurmJob, interrupted bool, why string) {
	node := map[string]ledger.CellStatus{}
	if nm, err := ledger.ReadManifest(filepath.Join(j.spec.Dir, "manifest.json")); err == nil {
		for _, c := range nm.Cells {
			node[c.ID] = c
		}
	}
	failedRow := map[string]string{}
	for _, i := range j.rowIdx {
		if r := a.res.Rows[i]; r.Status == ledger.StatusFailed && failedRow[r.CellID] == "" {
			failedRow[r.CellID] = r.Notes
		}
	}
	for _, c := range j.cells {
		st, ok := node[c.ID]
		switch {
		case ok && (st.Status == ledger.StatusOK || st.Status == ledger.StatusFailed) && failedRow[c.ID] == "":
		case failedRow[c.ID] != "":
			st = ledger.CellStatus{ID: c.ID, Status: ledger.StatusFailed, Notes: failedRow[c.ID]}
		case interrupted:
			st = ledger.CellStatus{ID: c.ID, Status: ledger.StatusInterrupted, Notes: why}
		default:
			st = ledger.CellStatus{ID: c.ID, Status: ledger.StatusFailed, Notes: why}
		}
		a.setCellStatus(st)
	}
}

// failJob fails every cell of a job that never ran (sbatch refused it): a failed row per
// level, naming why.
func (a *applier) failJob(j *slurmJob, why string) {
	a.note("%s: %s", j.spec.Name, why)
	m := &a.manifest.SlurmJobs[j.entry]
	m.State, m.Notes = "NOT SUBMITTED", why
	for _, c := range j.cells {
		todo, _ := a.pendingLevels(c)
		for _, lv := range todo {
			r := a.jobFailedRow(c, lv, why)
			a.appendRow(r)
		}
		a.setCellStatus(ledger.CellStatus{ID: c.ID, Status: ledger.StatusFailed, Notes: why})
	}
}

// mergeSamples appends a job's raw samples to the run's, a line at a time.
func (a *applier) mergeSamples(path string) error {
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
		rec.RunID = a.manifest.RunID // the sample joins this run, as its row did
		if err := a.samples.Write(rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return a.samples.Flush()
}

func (a *applier) setCellStatus(st ledger.CellStatus) {
	for i := range a.manifest.Cells {
		if a.manifest.Cells[i].ID == st.ID {
			a.manifest.Cells[i] = st
		}
	}
}

func mergeInto(dst *map[string]string, src map[string]string) {
	for k, v := range src {
		setIn(dst, k, v)
	}
}

// jobFailedRow is the row of a level its job never ran (the job failed, was cancelled
// or was never submitted): status failed, the reason in its notes, no figures. Host is
// left empty: no machine measured it.
func (a *applier) jobFailedRow(c *plan.Cell, lv plan.LoadLevel, why string) ledger.Row {
	r := cellRow(c, lv, a.runRowContext())
	r.Host = ""
	r.Status, r.Notes = ledger.StatusFailed, why
	return r
}

// follow watches one job until it ends: its state and its new rows go to events every
// Poll. It cancels the job when its node cannot see the run directory, when it goes
// RowsTimeout without a row, or when ctx ends (the first Ctrl-C); the last event says
// the job ended.
func (a *applier) follow(ctx context.Context, j *slurmJob, jr *jobRows, events chan<- jobEvent) {
	so := a.o.Slurm.withDefaults()
	shared := make(chan error, 1)
	go func() { _, err := slurm.WaitShared(ctx, j.spec, j.id, so.SharedTimeout); shared <- err }()
	lastRow := time.Now()
	var st slurm.Status
	ev := jobEvent{job: j}
	cancelled := false
	cancelFor := func(why string) {
		ev.reason = why
		if !cancelled {
			cancelled = true
			if err := a.cancelJob(j.id); err != nil {
				ev.note = err.Error()
			}
		}
	}
	for {
		if s, err := slurm.JobState(context.WithoutCancel(ctx), j.id); err == nil {
			st = s
		}
		if st.State == slurm.Pending || st.State == slurm.Unknown {
			lastRow = time.Now() // the rows clock runs while the job runs
		}
		rows := jr.next()
		if len(rows) > 0 {
			lastRow = time.Now()
		}
		if st.State.Terminal() {
			ev.rows = append(rows, jr.next()...)
			break
		}
		events <- jobEvent{job: j, status: st, rows: rows}
		select {
		case err := <-shared:
			if err != nil && ctx.Err() == nil {
				cancelFor(err.Error())
			}
		case <-ctx.Done():
			ev.interrupted = true
			cancelFor(ev.reason)
		case <-time.After(so.Poll):
			if time.Since(lastRow) > so.RowsTimeout {
				cancelFor(fmt.Sprintf("slurm job %s of hardware %q ran %s on %s without writing a row: cancelled (see %s)",
					j.id, j.spec.Hardware, so.RowsTimeout, st.Node, j.spec.LogPath(j.id)))
			}
		}
	}
	ev.status, ev.done = st, true
	events <- ev
}

// cancelJob cancels a job and waits until squeue no longer lists it; a second Ctrl-C
// stops the wait.
func (a *applier) cancelJob(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-a.o.Stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := slurm.Cancel(ctx, []string{id}); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("cancelling: %w", err)
	}
	return nil
}

// jobRows reads the rows a job's node writes into its results.csv.
type jobRows struct {
	path string
	// seen: levels already in the run (a resumed run's, or merged from this job).
	seen map[levelKey]bool
	// earlier is how many rows an earlier job of a resumed run left in the file: of
	// those, only complete levels the run lacks are taken (the coordinator may have
	// stopped before merging them); its interrupted rows are history.
	earlier int
	read    int
}

func newJobRows(dir string, seen map[levelKey]bool) *jobRows {
	jr := &jobRows{path: filepath.Join(dir, "results.csv"), seen: seen}
	rows, _ := ledger.ReadLedgerAll(jr.path)
	jr.earlier = len(rows)
	return jr
}

// next returns the rows written since the last call. A file caught mid-write is read
// again at the next poll.
func (jr *jobRows) next() []ledger.Row {
	rows, err := ledger.ReadLedgerAll(jr.path)
	if err != nil {
		return nil
	}
	var out []ledger.Row
	for i := jr.read; i < len(rows); i++ {
		r, k := rows[i], rowKey(rows[i])
		complete := r.Status == ledger.StatusOK || r.Status == ledger.StatusFailed
		if i < jr.earlier && (!complete || jr.seen[k]) {
			continue
		}
		jr.seen[k] = true
		out = append(out, r)
	}
	jr.read = max(jr.read, len(rows))
	return out
}

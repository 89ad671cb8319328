package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/planrun/planrun/apply/verdict"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
)

// The coordinator: cells whose hardware is placed on a batch scheduler (placements.go)
// run as jobs that the coordinator submits, follows and merges into this run.

// JobOptions tune how the coordinator follows its batch jobs; zero values take the
// defaults.
type JobOptions struct {
	// Poll is how often each job's state and rows are read (default 2s).
	Poll time.Duration
	// SharedTimeout is how long a running job may take to show that its node sees the
	// run directory (default 2m).
	SharedTimeout time.Duration
	// RowsTimeout is how long a running job may go without a new row before it is
	// cancelled and its unfinished cells fail (default 1h).
	RowsTimeout time.Duration
}

func (o JobOptions) withDefaults() JobOptions {
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

// coordinator runs the cells placed on a batch scheduler as jobs: it submits them,
// follows each from its own goroutine, and merges what the jobs' nodes write into the
// run record, from the goroutine that calls its methods (the one that runs the other
// cells between its merges).
type coordinator struct {
	rec        *runRecord
	schedulers map[plan.Placement]placement.Scheduler
	opts       JobOptions
	onNode     bool            // a job's node (Options.RunDir): every cell runs here
	stop       <-chan struct{} // the second Ctrl-C
	events     chan jobEvent
	open       int // jobs whose end has not been merged yet
}

func newCoordinator(rec *runRecord, scheds map[plan.Placement]placement.Scheduler, o Options) *coordinator {
	return &coordinator{rec: rec, schedulers: scheds, opts: o.Jobs.withDefaults(), onNode: o.RunDir != "", stop: o.Stop,
		events: make(chan jobEvent, 16)}
}

// scheduler is the batch scheduler that runs the cell, or nil when it runs here: always
// on a job's node.
func (co *coordinator) scheduler(c *plan.Cell) placement.Scheduler {
	if co.onNode || c.Hardware == nil {
		return nil
	}
	return co.schedulers[c.Hardware.Placement()]
}

// runs reports whether a batch job runs the cell.
func (co *coordinator) runs(c *plan.Cell) bool { return co.scheduler(c) != nil }

// checkSchedulers fails, naming the hardware block, when a selected cell is placed on a
// scheduler this machine cannot submit to: nothing is sent then.
func checkSchedulers(o Options, scheds map[plan.Placement]placement.Scheduler) error {
	if o.RunDir != "" {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range o.Cells {
		h := c.Hardware
		if h == nil || scheds[h.Placement()] == nil || seen[h.Name] {
			continue
		}
		seen[h.Name] = true
		if err := scheds[h.Placement()].Check(h.Name); err != nil {
			return err
		}
	}
	return nil
}

// batchJob is one batch job as the coordinator follows it. The follower goroutine owns
// status and seen; the rest is read and written by the coordinator's goroutine only.
type batchJob struct {
	sched  placement.Scheduler
	job    placement.Job
	id     string
	log    string // the job's output file, once it has an id
	cells  []*plan.Cell
	total  int // levels to run
	rowIdx []int
	line   string
	status placement.Status
	entry  int // its entry in the manifest (runRecord.job)
}

// place stamps a row with where the job ran it: the scheduler, the job, its node and
// pod.
func (j *batchJob) place(r *ledger.Row) {
	r.Batch = ledger.BatchPlace{Scheduler: j.sched.Name(), Job: j.id, Node: j.status.Node, Pod: j.status.Pod}
}

// jobEvent is what a follower tells the coordinator: the job's latest status, rows that
// appeared since the last event, and, once, that the job ended.
type jobEvent struct {
	job    *batchJob
	status placement.Status
	rows   []ledger.Row
	done   bool
	reason string // why planrun ended the job (unshared run directory, no rows), or ""
	// interrupted: the job was cancelled because the run was (the first Ctrl-C).
	interrupted bool
	note        string
}

// submit hands the selected cells with levels still to run to their schedulers, in
// plan order, and starts following each job.
func (co *coordinator) submit(ctx context.Context) {
	var order []placement.Scheduler
	cells := map[placement.Scheduler][]*plan.Cell{}
	for _, c := range co.rec.cells {
		s := co.scheduler(c)
		if s == nil {
			continue
		}
		if todo, _ := co.rec.pending(c); len(todo) == 0 {
			co.rec.note("%s: already complete in %s, skipped", c.ID, co.rec.res.RunDir)
			continue
		}
		if cells[s] == nil {
			order = append(order, s)
		}
		cells[s] = append(cells[s], c)
	}
	for _, s := range order {
		co.submitBatch(ctx, s, cells[s])
	}
}

// submitBatch submits the jobs of one scheduler's cells. A job the scheduler refuses
// fails its cells with the scheduler's message; the others go on.
func (co *coordinator) submitBatch(ctx context.Context, s placement.Scheduler, cells []*plan.Cell) {
	ids := make([]string, len(cells))
	byID := map[string]*plan.Cell{}
	for i, c := range cells {
		ids[i], byID[c.ID] = c.ID, c
	}
	jobs, err := s.Jobs(ids, co.rec.res.RunDir)
	if err != nil {
		for _, c := range cells {
			co.rec.setCell(ledger.CellStatus{ID: c.ID, Status: ledger.StatusFailed, Notes: err.Error()})
		}
		return
	}
	for _, job := range jobs {
		j := &batchJob{sched: s, job: job}
		for _, id := range job.CellIDs {
			c := byID[id]
			j.cells = append(j.cells, c)
			todo, _ := co.rec.pending(c)
			j.total += len(todo)
		}
		j.entry = co.rec.addJob(ledger.BatchJob{Scheduler: s.Name(), Name: job.Name, Hardware: job.Hardware,
			Dir: job.Dir, Cells: job.CellIDs, State: "SUBMITTING"})
		rows := newJobRows(job.Dir, co.rec.doneLevels()) // before the job can write a row
		if j.id, err = s.Submit(ctx, job); err != nil {
			co.failJob(j, err.Error())
			continue
		}
		j.log = s.LogPath(job, j.id)
		m := co.rec.job(j.entry)
		m.ID, m.Log = j.id, j.log
		co.rec.note("job %s %s: submitted (%d cells, %d levels; log %s)", j.id, job.Name, len(j.cells), j.total, j.log)
		co.open++
		go co.follow(ctx, j, rows)
	}
}

// mergeArrived merges what the jobs reported since the last call, without waiting.
func (co *coordinator) mergeArrived() {
	for co.open > 0 {
		select {
		case ev := <-co.events:
			co.merge(ev)
		default:
			return
		}
	}
}

// wait merges the jobs' rows until every job has ended; a second Ctrl-C (Stop) returns
// at once.
func (co *coordinator) wait() {
	for co.open > 0 {
		select {
		case ev := <-co.events:
			co.merge(ev)
		case <-co.stop:
			co.rec.interrupt()
			return
		}
	}
}

// merge writes what a follower reported: a progress line when the job's state
// or row count changed, its new rows into the report, and, once the job has ended, its
// rows with their final state into the ledgers, failed rows for levels it never ran,
// and its cells' statuses into the manifest.
func (co *coordinator) merge(ev jobEvent) {
	rec, j := co.rec, ev.job
	j.status = ev.status
	if ev.note != "" {
		rec.note("job %s %s: %s", j.id, j.job.Name, ev.note)
	}
	for _, r := range ev.rows {
		// The row joins this run: its id is the run's; Host stays the node that measured it.
		r.RunID = rec.runID()
		j.place(&r)
		j.rowIdx = append(j.rowIdx, rec.hold(r))
		if c := j.cell(r.CellID); c != nil && r.Status != ledger.StatusInterrupted {
			rec.expectFailed(verdict.Expects(rec.plan, c, r))
		}
	}
	if line := fmt.Sprintf("%s, rows %d of %d", j.status.Line(j.job.Name), len(j.rowIdx), j.total); line != j.line {
		j.line = line
		rec.note("%s", line)
	}
	m := rec.job(j.entry)
	m.Node, m.State, m.ExitCode, m.Pod = j.status.Node, j.status.State, j.status.ExitCode, j.status.Pod
	if ev.done {
		co.open--
		if ev.interrupted {
			rec.interrupt()
		}
		co.endJob(j, ev.reason, ev.interrupted)
	}
	if err := rec.writeManifest(); err != nil {
		rec.note("writing the manifest: %v", err)
	}
	if err := rec.writeReport(); err != nil {
		rec.note("writing the report: %v", err)
	}
}

func (j *batchJob) cell(id string) *plan.Cell {
	for _, c := range j.cells {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// endJob settles an ended job: its final state goes into each of its rows, which are
// then appended to the ledgers; levels it did not run become failed rows naming the
// state and the log (or interrupted, when the run was), and a level the node failed in a
// job that did not complete names them after the node's own note; cells take the status
// the node gave them.
func (co *coordinator) endJob(j *batchJob, reason string, interrupted bool) {
	rec := co.rec
	ended := fmt.Sprintf("%s job %s ended %s (see %s)", j.sched.Name(), j.id, j.status.State, j.log)
	if j.status.Why != "" {
		ended = fmt.Sprintf("%s job %s ended %s: %s (see %s)", j.sched.Name(), j.id, j.status.State, j.status.Why, j.log)
	}
	why := reason
	switch {
	case why != "":
	case j.status.Why != "":
		why = ended
	case j.status.Phase == placement.Completed:
		why = fmt.Sprintf("%s job %s ended %s without writing this level's row (see %s)", j.sched.Name(), j.id, j.status.State, j.log)
	default:
		why = fmt.Sprintf("%s job %s ended %s before this level ran (see %s)", j.sched.Name(), j.id, j.status.State, j.log)
	}
	interrupted = interrupted && reason == ""
	ran := map[levelKey]bool{}
	for _, i := range j.rowIdx {
		r := rec.row(i)
		ran[rowKey(*r)] = true
		if r.Status == ledger.StatusFailed && j.status.Phase != placement.Completed {
			// A level the node failed as the job was ended (its cancel stopped the
			// level's server while it started) says how the job ended, too.
			r.Notes = strings.TrimPrefix(r.Notes+"; "+ended, "; ")
		}
	}
	for _, c := range j.cells {
		todo, _ := rec.pending(c)
		for _, lv := range todo {
			if ran[levelKey{c.ID, lv}] || interrupted {
				continue
			}
			r := jobFailedRow(rec, c, lv, why)
			j.place(&r)
			j.rowIdx = append(j.rowIdx, rec.hold(r))
		}
	}
	for _, i := range j.rowIdx {
		r := rec.row(i)
		r.Batch.State = j.status.State
		rec.writeLedgers(*r)
	}
	co.settleCells(j, interrupted, why)
	if err := rec.mergeRequests(filepath.Join(j.job.Dir, ledger.RequestsFile)); err != nil {
		rec.note("job %s %s: merging its raw samples: %v", j.id, j.job.Name, err)
	}
	m := rec.job(j.entry)
	m.Notes = cmp.Or(reason, j.status.Why)
	if nm, err := ledger.ReadManifest(filepath.Join(j.job.Dir, ledger.ManifestFile)); err == nil {
		m.GPUs = nm.GPUs
		rec.mergeNode(nm)
	}
}

// settleCells gives each of the job's cells its status: the node's own (from its
// manifest) when the node finished the cell, else failed with why, or interrupted.
func (co *coordinator) settleCells(j *batchJob, interrupted bool, why string) {
	node := map[string]ledger.CellStatus{}
	if nm, err := ledger.ReadManifest(filepath.Join(j.job.Dir, ledger.ManifestFile)); err == nil {
		for _, c := range nm.Cells {
			node[c.ID] = c
		}
	}
	failedRow := map[string]string{}
	for _, i := range j.rowIdx {
		if r := co.rec.row(i); r.Status == ledger.StatusFailed && failedRow[r.CellID] == "" {
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
		co.rec.setCell(st)
	}
}

// failJob fails every cell of a job that never ran (its scheduler refused it): a failed row per
// level, naming why.
func (co *coordinator) failJob(j *batchJob, why string) {
	rec := co.rec
	rec.note("%s: %s", j.job.Name, why)
	m := rec.job(j.entry)
	m.State, m.Notes = "NOT SUBMITTED", why
	for _, c := range j.cells {
		todo, _ := rec.pending(c)
		for _, lv := range todo {
			rec.append(jobFailedRow(rec, c, lv, why))
		}
		rec.setCell(ledger.CellStatus{ID: c.ID, Status: ledger.StatusFailed, Notes: why})
	}
}

// jobFailedRow is the row of a level its job never ran (the job failed, was cancelled
// or was never submitted): status failed, the reason in its notes, no figures. Host is
// left empty: no machine measured it.
func jobFailedRow(rec *runRecord, c *plan.Cell, lv plan.LoadLevel, why string) ledger.Row {
	r := cellRow(c, lv, rec.rowContext())
	r.Host = ""
	r.Status, r.Notes = ledger.StatusFailed, why
	return r
}

// follow watches one job until it ends: its state and its new rows go to events every
// Poll. It cancels the job when its node cannot see the run directory, when it goes
// RowsTimeout without a row, or when ctx ends (the first Ctrl-C); the last event says
// the job ended.
func (co *coordinator) follow(ctx context.Context, j *batchJob, jr *jobRows) {
	so, events := co.opts, co.events
	shared := make(chan error, 1)
	go func() { shared <- j.sched.WaitShared(ctx, j.job, j.id, so.SharedTimeout) }()
	lastRow := time.Now()
	st := placement.Status{State: placement.UnknownState}
	ev := jobEvent{job: j}
	cancelled := false
	cancelFor := func(why string) {
		ev.reason = why
		if !cancelled {
			cancelled = true
			if err := co.cancel(j); err != nil {
				ev.note = err.Error()
			}
		}
	}
	for {
		if s, err := j.sched.State(context.WithoutCancel(ctx), j.id); err == nil {
			st = s
		}
		if st.Phase == placement.Pending || st.Phase == placement.Unknown {
			lastRow = time.Now() // the rows clock runs while the job runs
		}
		rows := jr.next()
		if len(rows) > 0 {
			lastRow = time.Now()
		}
		if st.Phase.Ended() {
			ev.rows = append(rows, jr.next()...)
			break
		}
		// Judged on what was just read, not after the wait below: a coordinator held up
		// past RowsTimeout (a loaded machine) would otherwise cancel a job it last saw
		// pending, or whose new rows it had not yet read.
		if time.Since(lastRow) > so.RowsTimeout {
			cancelFor(fmt.Sprintf("%s job %s of hardware %q ran %s on %s without writing a row: cancelled (see %s)",
				j.sched.Name(), j.id, j.job.Hardware, so.RowsTimeout, st.Node, j.log))
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
		}
	}
	ev.status, ev.done = st, true
	events <- ev
}

// cancel cancels a job and waits until its scheduler no longer runs it; a second Ctrl-C
// stops the wait.
func (co *coordinator) cancel(j *batchJob) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-co.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := j.sched.Cancel(ctx, j.id); err != nil && !errors.Is(err, context.Canceled) {
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
	jr := &jobRows{path: filepath.Join(dir, ledger.ResultsFile), seen: seen}
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

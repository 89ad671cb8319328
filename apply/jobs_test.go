package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
)

// step is one stretch of a fake job's life: the status State answers while it lasts,
// and what the job's node has written by then.
type step struct {
	phase        placement.Phase
	state        string
	reason, node string
	// levels are the concurrencies whose rows the node writes (ok) when the step begins;
	// failed those it writes as failed, with failNotes.
	levels, failed []int
	failNotes      string
	// node: the node also writes its manifest (its cell ok) and one raw sample.
	finish bool
	// lasts is how long the step lasts; zero: one query; forever: until cancelled (or,
	// so that a coordinator that never cancels fails rather than hangs, for
	// fakeTimeLimit, after which the job ends TIMEOUT).
	lasts   time.Duration
	forever bool
	// then runs when the step begins (e.g. the first Ctrl-C).
	then func()
}

// fakeScheduler is a batch scheduler without a cluster: every job it is given plays the
// same steps, one State query after another, writing into the job's directory what a
// node running planrun apply -run-dir would.
type fakeScheduler struct {
	t      *testing.T
	steps  []step
	shared error  // what WaitShared answers at once: nil, the node sees the directory
	refuse string // Submit's error, when set

	mu        sync.Mutex
	jobs      map[string]*fakeJob
	submitted []placement.Job
	cancelled []string
}

const fakeTimeLimit = 10 * time.Second

type fakeJob struct {
	job       placement.Job
	at        int // the step State answers
	began     time.Time
	cancelled bool
}

func newFake(t *testing.T, steps ...step) *fakeScheduler {
	return &fakeScheduler{t: t, steps: steps, jobs: map[string]*fakeJob{}}
}

func (f *fakeScheduler) Name() string                { return "fake" }
func (f *fakeScheduler) Check(hardware string) error { return nil }

func (f *fakeScheduler) Jobs(cellIDs []string, runDir string) ([]placement.Job, error) {
	return []placement.Job{{Name: "small", Hardware: "small", CellIDs: cellIDs, Dir: filepath.Join(runDir, "fake", "small")}}, nil
}

func (f *fakeScheduler) Submit(ctx context.Context, job placement.Job) (string, error) {
	if f.refuse != "" {
		return "", errors.New(f.refuse)
	}
	if err := os.MkdirAll(job.Dir, 0o755); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, job)
	id := fmt.Sprint(len(f.submitted))
	f.jobs[id] = &fakeJob{job: job, at: -1}
	return id, nil
}

func (f *fakeScheduler) State(ctx context.Context, id string) (placement.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[id]
	if j.cancelled {
		return placement.Status{ID: id, Phase: placement.Failed, State: "CANCELLED", Node: "node1"}, nil
	}
	if j.at >= 0 && f.steps[j.at].forever && time.Since(j.began) > fakeTimeLimit {
		return placement.Status{ID: id, Phase: placement.Failed, State: "TIMEOUT", Node: "node1"}, nil
	}
	if j.at < 0 || j.at < len(f.steps)-1 && !f.steps[j.at].forever && time.Since(j.began) >= f.steps[j.at].lasts {
		j.at++
		j.began = time.Now()
		f.begin(j, f.steps[j.at])
	}
	s := f.steps[j.at]
	return placement.Status{ID: id, Phase: s.phase, State: s.state, Reason: s.reason, Node: s.node}, nil
}

// begin writes what the node has written when the step begins.
func (f *fakeScheduler) begin(j *fakeJob, s step) {
	cell := j.job.CellIDs[0]
	if len(s.levels)+len(s.failed) > 0 {
		l, err := ledger.OpenLedger(filepath.Join(j.job.Dir, "results.csv"))
		if err != nil {
			f.t.Error(err)
			return
		}
		for _, c := range s.levels {
			if err := l.Append(ledger.Row{RunID: "node-run", Host: "node1", CellID: cell, Concurrency: c, Status: ledger.StatusOK}); err != nil {
				f.t.Error(err)
			}
		}
		for _, c := range s.failed {
			if err := l.Append(ledger.Row{RunID: "node-run", Host: "node1", CellID: cell, Concurrency: c, Status: ledger.StatusFailed, Notes: s.failNotes}); err != nil {
				f.t.Error(err)
			}
		}
		l.Close()
	}
	if s.finish {
		m := ledger.Manifest{RunID: "node-run", Cells: []ledger.CellStatus{{ID: cell, Status: ledger.StatusOK}}}
		if err := ledger.WriteManifest(filepath.Join(j.job.Dir, "manifest.json"), m); err != nil {
			f.t.Error(err)
		}
		log, err := ledger.OpenRequestLog(filepath.Join(j.job.Dir, "requests.jsonl"))
		if err != nil {
			f.t.Error(err)
			return
		}
		if err := log.Write(ledger.RequestRecord{CellID: cell, Concurrency: 1, RunID: "node-run"}); err != nil {
			f.t.Error(err)
		}
		log.Close()
	}
	if s.then != nil {
		s.then()
	}
}

func (f *fakeScheduler) Cancel(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs[id].cancelled = true
	f.cancelled = append(f.cancelled, id)
	return nil
}

func (f *fakeScheduler) WaitShared(ctx context.Context, job placement.Job, id string, timeout time.Duration) error {
	return f.shared
}

func (f *fakeScheduler) LogPath(job placement.Job, id string) string {
	return filepath.Join(job.Dir, "fake-"+id+".log")
}

func (f *fakeScheduler) Close(context.Context) error { return nil }

func (f *fakeScheduler) cancels() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancelled...)
}

// One cell of two levels on a scheduled hardware block: its cells never run here.
const fakePlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
hardware "small" {
  slurm { partition = "small" }
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2]
  repeat_runs   = 1
}
matrix "m" {
  model = ["tiny"]
  tool = [backend.openai.mock]
  hardware = [hardware.small]
  workload = [workload.w]
}
`

// runFake applies fakePlan with f as its only scheduler; resume continues that run
// directory.
func runFake(t *testing.T, ctx context.Context, f *fakeScheduler, rowsTimeout time.Duration, results, resume string) (*Result, *noteRecorder) {
	t.Helper()
	p, cells := loadPlan(t, fakePlan, "http://127.0.0.1:9")
	notes := &noteRecorder{}
	res, err := Run(ctx, Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), ResultsDir: results, Resume: resume,
		Progress: notes, Schedulers: map[plan.Placement]placement.Scheduler{"slurm": f},
		Jobs: JobOptions{Poll: 5 * time.Millisecond, RowsTimeout: rowsTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	return res, notes
}

// rowsOf lists rows as "c=N status state notes", to compare at a glance.
func rowsOf(rows []ledger.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("c=%d %s %s job=%s node=%s %s", r.Concurrency, r.Status, r.Batch.State, r.Batch.Job, r.Batch.Node, r.Notes))
	}
	return out
}

// A job that waits longer than RowsTimeout, then runs, writes both rows and completes:
// the wait does not count against it, its rows join the run (this run's id, the job and
// node beside them, the final state), the cell takes the node's status, and the node's
// raw samples are merged.
func TestJobsPendingRunningCompleted(t *testing.T) {
	f := newFake(t,
		step{phase: placement.Pending, state: "PENDING", reason: "Resources", lasts: 1500 * time.Millisecond},
		step{phase: placement.Running, state: "RUNNING", node: "node1", levels: []int{1}},
		step{phase: placement.Running, state: "RUNNING", node: "node1", levels: []int{2}, finish: true},
		step{phase: placement.Completed, state: "COMPLETED", node: "node1"})
	res, notes := runFake(t, context.Background(), f, 500*time.Millisecond, t.TempDir(), "")
	got := rowsOf(res.Rows)
	if len(got) != 2 || got[0] != "c=1 ok COMPLETED job=1 node=node1 " || got[1] != "c=2 ok COMPLETED job=1 node=node1 " {
		t.Fatalf("rows %q", got)
	}
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.RunID != m.RunID || r.RunID == "node-run" || r.Host != "node1" {
			t.Errorf("row c=%d: run id %q (run's %q), host %q", r.Concurrency, r.RunID, m.RunID, r.Host)
		}
	}
	if ok, failed, _, _ := res.Counts(); ok != 1 || failed != 0 {
		t.Errorf("cells %+v", res.Cells)
	}
	if len(m.Jobs) != 1 || m.Jobs[0].ID != "1" || m.Jobs[0].State != "COMPLETED" || m.Jobs[0].Node != "node1" {
		t.Errorf("manifest jobs %+v", m.Jobs)
	}
	if len(f.cancels()) != 0 {
		t.Errorf("cancelled %v", f.cancels())
	}
	for _, want := range []string{"job 1 small: submitted (1 cells, 2 levels; log ", "job 1 small: PENDING (Resources), rows 0 of 2", "job 1 small: COMPLETED on node1, rows 2 of 2"} {
		if !strings.Contains(notes.text(), want) {
			t.Errorf("notes lack %q:\n%s", want, notes.text())
		}
	}
	ledger, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(ledger) != 2 || ledger[0].Batch.State != "COMPLETED" {
		t.Errorf("ledger %q, %v", rowsOf(ledger), err)
	}
	if samples := readSamples(t, res.RunDir); len(samples) != 1 || samples[0].RunID != m.RunID {
		t.Errorf("samples %+v", samples)
	}
}

// A job that ends FAILED after one row: the other level becomes a failed row naming the
// state and the log, every row of the job carries the final state, and the cell fails.
func TestJobsFailedJob(t *testing.T) {
	f := newFake(t,
		step{phase: placement.Running, state: "RUNNING", node: "node1", levels: []int{1}},
		step{phase: placement.Failed, state: "NODE_FAIL", node: "node1"})
	res, _ := runFake(t, context.Background(), f, time.Minute, t.TempDir(), "")
	log := f.LogPath(f.submitted[0], "1")
	got := rowsOf(res.Rows)
	want := []string{"c=1 ok NODE_FAIL job=1 node=node1 ", "c=2 failed NODE_FAIL job=1 node=node1 fake job 1 ended NODE_FAIL before this level ran (see " + log + ")"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, failed, _, _ := res.Counts(); failed != 1 || !strings.Contains(res.Cells[0].Notes, "ended NODE_FAIL") {
		t.Errorf("cells %+v", res.Cells)
	}
}

// A level the node failed as its job was ended (scancel stopped the level's server while
// it started) says how the job ended, beside what the node saw, as the levels it never
// ran do; a failed row of a job that completed says only what the node saw.
func TestJobsFailedRowNamesHowTheJobEnded(t *testing.T) {
	const nodeSaw = `not measured: server "slow" did not start: exited before ready`
	for _, tc := range []struct {
		phase placement.Phase
		state string
		want  string
	}{
		{placement.Failed, "CANCELLED", nodeSaw + "; fake job 1 ended CANCELLED (see %s)"},
		{placement.Completed, "COMPLETED", nodeSaw},
	} {
		t.Run(tc.state, func(t *testing.T) {
			f := newFake(t,
				step{phase: placement.Running, state: "RUNNING", node: "node1", levels: []int{1}, failed: []int{2}, failNotes: nodeSaw},
				step{phase: tc.phase, state: tc.state, node: "node1"})
			res, _ := runFake(t, context.Background(), f, time.Minute, t.TempDir(), "")
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, f.LogPath(f.submitted[0], "1"))
			}
			got := rowsOf(res.Rows)
			if len(got) != 2 || got[1] != "c=2 failed "+tc.state+" job=1 node=node1 "+want {
				t.Fatalf("rows\n%s\nwant the second\n%s", strings.Join(got, "\n"), want)
			}
			if _, failed, _, _ := res.Counts(); failed != 1 || res.Cells[0].Notes != want {
				t.Errorf("cells %+v, want failed with %q", res.Cells, want)
			}
		})
	}
}

// The coordinator cancels a job that runs RowsTimeout without a row, and one whose node
// cannot see the run directory; both fail their levels with the reason.
func TestJobsCancelled(t *testing.T) {
	for name, tc := range map[string]struct {
		shared error
		why    string
	}{
		"no rows":  {why: "fake job 1 of hardware \"small\" ran 300ms on node1 without writing a row: cancelled (see "},
		"unshared": {shared: errors.New("the run directory is not shared with node1"), why: "the run directory is not shared with node1"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, step{phase: placement.Running, state: "RUNNING", node: "node1", forever: true})
			f.shared = tc.shared
			res, _ := runFake(t, context.Background(), f, 300*time.Millisecond, t.TempDir(), "")
			if got := f.cancels(); len(got) != 1 || got[0] != "1" {
				t.Fatalf("cancelled %v, want job 1", got)
			}
			if len(res.Rows) != 2 {
				t.Fatalf("rows %q, want a failed row per level", rowsOf(res.Rows))
			}
			for _, r := range res.Rows {
				if r.Status != ledger.StatusFailed || r.Batch.State != "CANCELLED" || !strings.Contains(r.Notes, tc.why) {
					t.Errorf("row %q, want failed, CANCELLED, %q", rowsOf([]ledger.Row{r}), tc.why)
				}
			}
			if _, failed, _, _ := res.Counts(); failed != 1 || res.Interrupted {
				t.Errorf("cells %+v, interrupted %v", res.Cells, res.Interrupted)
			}
		})
	}
}

// The first Ctrl-C cancels a running job: its row so far is kept, the level it did not
// run is left to a resume (no failed row), and the cell is interrupted. Resuming submits
// a job for that level only, takes no row twice, and completes the cell.
func TestJobsInterruptThenResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(t,
		step{phase: placement.Running, state: "RUNNING", node: "node1", levels: []int{1}},
		step{phase: placement.Running, state: "RUNNING", node: "node1", forever: true, then: cancel})
	results := t.TempDir()
	res, _ := runFake(t, ctx, f, time.Minute, results, "")
	if got := rowsOf(res.Rows); len(got) != 1 || got[0] != "c=1 ok CANCELLED job=1 node=node1 " {
		t.Fatalf("rows %q", got)
	}
	if got := f.cancels(); len(got) != 1 {
		t.Errorf("cancelled %v, want job 1", got)
	}
	if _, _, interrupted, _ := res.Counts(); interrupted != 1 || !res.Interrupted {
		t.Fatalf("cells %+v, interrupted %v", res.Cells, res.Interrupted)
	}

	again := newFake(t,
		step{phase: placement.Running, state: "RUNNING", node: "node2", levels: []int{2}, finish: true},
		step{phase: placement.Completed, state: "COMPLETED", node: "node2"})
	res2, notes := runFake(t, context.Background(), again, time.Minute, results, res.RunDir)
	got := rowsOf(res2.Rows)
	want := []string{"c=1 ok CANCELLED job=1 node=node1 ", "c=2 ok COMPLETED job=1 node=node2 "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resumed rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(notes.text(), "job 1 small: submitted (1 cells, 1 levels;") {
		t.Errorf("the resumed job is not for the one level left:\n%s", notes.text())
	}
	if ok, _, _, _ := res2.Counts(); ok != 1 {
		t.Errorf("cells %+v", res2.Cells)
	}
	if ledger, err := ledger.ReadLedgerAll(res2.LedgerPath); err != nil || len(ledger) != 2 {
		t.Errorf("ledger %q, %v: want each level once", rowsOf(ledger), err)
	}
}

// A job the scheduler refuses fails each of its levels with the scheduler's words, and
// nothing is followed.
func TestJobsRefused(t *testing.T) {
	f := newFake(t, step{phase: placement.Running, state: "RUNNING"})
	f.refuse = `hardware "small": submitting: invalid partition`
	res, _ := runFake(t, context.Background(), f, time.Minute, t.TempDir(), "")
	if len(res.Rows) != 2 {
		t.Fatalf("rows %q", rowsOf(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusFailed || r.Notes != f.refuse || r.Batch.Job != "" {
			t.Errorf("row %q", rowsOf([]ledger.Row{r}))
		}
	}
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
	if err != nil || len(m.Jobs) != 1 || m.Jobs[0].State != "NOT SUBMITTED" {
		t.Errorf("manifest jobs %+v, %v", m.Jobs, err)
	}
}

// The coordinator needs no cell runner: given a run record and a scheduler it submits
// the job, merges its rows and the node's samples into the record, and settles the cell.
// This is the seam a Kubernetes placement or a many-agent cell writes a run through.
func TestCoordinatorWritesTheRunAlone(t *testing.T) {
	f := newFake(t,
		step{phase: placement.Running, state: "RUNNING", node: "node1", levels: []int{1, 2}, finish: true},
		step{phase: placement.Completed, state: "COMPLETED", node: "node1"})
	p, cells := loadPlan(t, fakePlan, "http://127.0.0.1:9")
	notes := &noteRecorder{}
	o := Options{Plan: p, Cells: cells, ResultsDir: t.TempDir(), Jobs: JobOptions{Poll: 5 * time.Millisecond}}
	rec, err := openRun(o, time.Now, notes.Note)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.close()
	co := newCoordinator(rec, map[plan.Placement]placement.Scheduler{"slurm": f}, o)
	if !co.runs(cells[0]) {
		t.Fatalf("the coordinator does not run the slurm cell")
	}
	if err := rec.begin(); err != nil {
		t.Fatal(err)
	}
	co.submit(context.Background())
	co.wait()
	res, err := rec.end()
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(res.Rows); strings.Join(got, "|") != "c=1 ok COMPLETED job=1 node=node1 |c=2 ok COMPLETED job=1 node=node1 " {
		t.Fatalf("rows %q\nnotes:\n%s", got, notes.text())
	}
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != 1 || m.Cells[0].Status != ledger.StatusOK || m.Ended.IsZero() || len(m.Jobs) != 1 || m.Jobs[0].State != "COMPLETED" {
		t.Errorf("manifest cells %+v, jobs %+v, ended %v", m.Cells, m.Jobs, m.Ended)
	}
	if l, err := ledger.ReadLedger(res.LedgerPath); err != nil || len(l) != 2 || l[0].RunID != m.RunID {
		t.Errorf("ledger %q, %v", rowsOf(l), err)
	}
	if samples := readSamples(t, res.RunDir); len(samples) != 1 || samples[0].RunID != m.RunID {
		t.Errorf("samples %+v", samples)
	}
}

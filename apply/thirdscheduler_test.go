package apply

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"

	"github.com/hashicorp/hcl/v2"
)

// A third scheduler is its placement.Kind and one entry in the table: this test's
// "queue" scheduler owns a queue { name = ... } block (decoded and checked by its kind,
// with the plan's file and line), runs each job as apply's own node side in this process
// (apply -run-dir, against a mock server), reads its job's memory through
// WithJobMemory, and its rows, manifest and history carry it like Slurm's and
// Kubernetes'. Nothing outside this file and the table names it.
func TestThirdScheduler(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	useQueue(t)

	// Its block's mistakes are the plan's, on their line.
	bad := strings.Replace(queuePlan, `name = "batch"`, `name = ""`, 1)
	if _, diags := plan.LoadFiles(t.TempDir(), map[string][]byte{"plan.hcl": []byte(bad)},
		plan.LoadOptions{Vars: []string{"url=" + srv.URL}, Getenv: func(string) string { return "" }, Placements: Placements()}); !diags.HasErrors() ||
		diags[0].Summary != "Missing queue name" || diags[0].Subject.Start.Line != 5 {
		t.Fatalf("a queue block without a name: %v", diags)
	}

	p, cells := loadPlan(t, queuePlan, srv.URL)
	if got := cells[0].Hardware.Placement(); got != "queue" || cells[0].Hardware.Batch.Settings.String() != "queue batch" {
		t.Fatalf("placement %q, %v", got, cells[0].Hardware.Batch.Settings)
	}
	o := Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Vars: []string{"url=" + srv.URL}, ResultsDir: t.TempDir()}
	o.Jobs.Poll = 20 * time.Millisecond
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want the cell's 2 levels", len(res.Rows))
	}
	for _, r := range res.Rows {
		want := ledger.BatchPlace{Scheduler: "queue", Job: "q-1", Node: "worker-7", State: "DONE"}
		if r.Status != ledger.StatusOK || r.Requests == 0 || r.Batch != want {
			t.Errorf("c=%d: %s, %d requests, placed %+v: want ok and %+v", r.Concurrency, r.Status, r.Requests, r.Batch, want)
		}
		if r.MemJobPeakGB != 0.2 || !strings.HasPrefix(r.MemJobSource, "the queue's reading of the whole job, ") {
			t.Errorf("c=%d: job memory %v %q", r.Concurrency, r.MemJobPeakGB, r.MemJobSource)
		}
	}
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, ledger.ManifestFile))
	if err != nil || len(m.Jobs) != 1 || m.Jobs[0].Scheduler != "queue" || m.Jobs[0].ID != "q-1" || m.Jobs[0].State != "DONE" {
		t.Errorf("manifest jobs %+v, %v", m.Jobs, err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Status != ledger.StatusOK {
		t.Errorf("cells %+v", res.Cells)
	}
}

const queuePlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
hardware "pool" {
  queue { name = "batch" }
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2]
  repeat_runs   = 1
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  hardware = [hardware.pool]
  workload = [workload.w]
}
`

// useQueue adds the queue scheduler to the placement table for the test's duration.
func useQueue(t *testing.T) {
	t.Cleanup(func(before []placement.Kind) func() { return func() { placements = before } }(placements))
	placements = append(slices.Clip(placements), placement.Kind{
		Block: plan.PlacementKind{Name: "queue", Scheduler: "Queue", Jobs: "queue jobs", Decode: decodeQueue},
		New: func(s placement.Setup) placement.Scheduler {
			return &queueScheduler{setup: s, jobs: map[string]*queueJob{}}
		},
		InJob: func(getenv func(string) string) placement.InJob {
			if getenv("QUEUE_JOB") == "" {
				return nil
			}
			return queueInJob{}
		},
	})
}

type queueSettings struct{ name string }

func (s *queueSettings) String() string { return "queue " + s.name }

func decodeQueue(b *plan.BatchDecoder) plan.BatchSettings {
	s := &queueSettings{}
	a := b.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "name"}}}).Attributes
	if !b.Decode(a["name"], &s.name) || s.name == "" {
		b.Errorf(b.Block.DefRange.Ptr(), "Missing queue name", "A queue block names its queue.")
	}
	return s
}

// queueScheduler runs each job as apply's node side in this process, in the job's
// directory, as a scheduler's machine would run planrun apply -run-dir.
type queueScheduler struct {
	setup placement.Setup

	mu   sync.Mutex
	jobs map[string]*queueJob
}

type queueJob struct {
	job  placement.Job
	done bool
	err  error
}

func (q *queueScheduler) Name() string                { return "queue" }
func (q *queueScheduler) Check(string) error          { return nil }
func (q *queueScheduler) Close(context.Context) error { return nil }

func (q *queueScheduler) Jobs(cellIDs []string, runDir string) ([]placement.Job, error) {
	return []placement.Job{{Name: "pool", Hardware: "pool", CellIDs: cellIDs, Dir: filepath.Join(runDir, "queue", "pool")}}, nil
}

func (q *queueScheduler) Submit(ctx context.Context, job placement.Job) (string, error) {
	id := "q-1"
	j := &queueJob{job: job}
	q.mu.Lock()
	q.jobs[id] = j
	q.mu.Unlock()
	var cells []*plan.Cell
	for _, c := range q.setup.Cells {
		if slices.Contains(job.CellIDs, c.ID) {
			cells = append(cells, c)
		}
	}
	go func() {
		_, err := Run(ctx, Options{Plan: q.setup.Plan, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), RunDir: job.Dir, Quiet: true,
			Getenv: func(k string) string { return map[string]string{"QUEUE_JOB": id}[k] }})
		q.mu.Lock()
		j.done, j.err = true, err
		q.mu.Unlock()
	}()
	return id, nil
}

func (q *queueScheduler) State(_ context.Context, id string) (placement.Status, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.jobs[id]
	switch {
	case !j.done:
		return placement.Status{ID: id, Phase: placement.Running, State: "RUNNING", Node: "worker-7"}, nil
	case j.err != nil:
		return placement.Status{ID: id, Phase: placement.Failed, State: "BROKEN", Node: "worker-7", Why: j.err.Error()}, nil
	}
	return placement.Status{ID: id, Phase: placement.Completed, State: "DONE", Node: "worker-7"}, nil
}

func (q *queueScheduler) Cancel(context.Context, string) error { return nil }

func (q *queueScheduler) WaitShared(context.Context, placement.Job, string, time.Duration) error {
	return nil
}

func (q *queueScheduler) LogPath(job placement.Job, id string) string {
	return filepath.Join(job.Dir, id+".log")
}

// queueInJob is the node side's job: its agents are local processes, and it reads the
// job's memory as 200 MB at its peak.
type queueInJob struct{}

func (queueInJob) Agents(a placement.AgentStart) (placement.Agents, error) {
	return placement.Agents{Launcher: fleet.Local{Command: a.Command}, Shared: true, Where: "the queue's"}, nil
}

func (queueInJob) JobMemory(context.Context) (placement.JobMemory, error) {
	return placement.JobMemory{Resident: 100e6, Peak: 200e6}, nil
}

func (queueInJob) MemorySource() string { return "the queue's reading of the whole job" }

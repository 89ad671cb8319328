// Package placement is what apply needs from a batch scheduler (Slurm in placement/slurm,
// Kubernetes Jobs in placement/kube) to run some of a plan's cells on machines the scheduler
// picks. The scheduler
// submits jobs that each run
//
//	planrun apply -quiet -run-dir JOB_DIR -only CELL ... PLAN
//
// where JOB_DIR (Job.Dir) is inside the coordinator's run directory, on a filesystem the
// job's machine shares; apply follows each job's state, reads the rows, raw samples and
// manifest the job writes there, and merges them into the one run. A scheduler says only
// how jobs are grouped, submitted, watched and cancelled.
package placement

import (
	"context"
	"fmt"
	"time"
)

// Scheduler runs jobs of cells. Jobs is called before the other methods; the others may
// be called from several goroutines at once.
type Scheduler interface {
	// Name is the scheduler's name in messages: "slurm job 12 ended FAILED ...".
	Name() string
	// Check says, before anything is sent or written, whether hardware's cells can be
	// submitted from this machine; its error names the hardware block.
	Check(hardware string) error
	// Jobs groups the cells (ids, in plan order) into jobs, each with its directory
	// under runDir.
	Jobs(cellIDs []string, runDir string) ([]Job, error)
	// Submit submits a job and returns the scheduler's id for it; an error quotes the
	// scheduler's refusal.
	Submit(ctx context.Context, job Job) (string, error)
	// State asks for a job's state.
	State(ctx context.Context, id string) (Status, error)
	// Cancel cancels a job and returns once the scheduler no longer runs it (or ctx
	// ends).
	Cancel(ctx context.Context, id string) error
	// WaitShared returns once the job's machine has shown that it sees the run
	// directory; it fails, naming the directory, when the job ends without showing it
	// or runs timeout without (a pending job is not the machine's fault).
	WaitShared(ctx context.Context, job Job, id string, timeout time.Duration) error
	// LogPath is the file the job's output goes to.
	LogPath(job Job, id string) string
	// Close releases what the scheduler still holds for the run when apply ends,
	// however it ends (Kubernetes: every object labelled with the run).
	Close(ctx context.Context) error
}

// Job is one batch job: some cells of one hardware block.
type Job struct {
	// Name is the job's name within the plan: the hardware block's name, or
	// "<hardware>-<n>" for the n-th job of a block that runs a job per cell.
	Name     string
	Hardware string
	CellIDs  []string
	// Dir is the job's run directory, which the coordinator reads: results.csv,
	// requests.jsonl, manifest.json.
	Dir string
}

// Phase is where a job is in its life, as the coordinator acts on it.
type Phase int

// The phases. Completed and Failed end the job; only Completed means it exited 0.
const (
	Unknown Phase = iota // not known yet, or a state the coordinator does not act on
	Pending              // waiting for a machine
	Running
	Completed
	Failed // failed, cancelled, timed out, lost its machine, ...
)

// Ended reports whether the job has ended (it will not run again).
func (p Phase) Ended() bool { return p >= Completed }

// UnknownState is the State of a job the scheduler has not answered about yet.
const UnknownState = "UNKNOWN"

// Status is what the scheduler says about one job.
type Status struct {
	ID    string
	Phase Phase
	// State is the scheduler's own name for it ("PENDING", "NODE_FAIL"), as rows and the
	// manifest keep it.
	State    string
	Reason   string // why a pending job waits ("None" or empty when it does not say)
	Node     string // the machine(s) it runs on, once running
	ExitCode string // the scheduler's own form, once ended
	// Pod is the pod that runs the job, for schedulers that run pods (Kubernetes).
	Pod string
	// Why is what the scheduler said about a job that failed or cannot start (Kubernetes:
	// the Job's condition, the pod's termination or why it is not scheduled), which the
	// job's failed rows carry; empty when it says nothing more than State.
	Why string
}

// Line is the job's progress line: "job 12 small: PENDING (Resources)", "job 12 small:
// RUNNING on node1", "job 12 small: COMPLETED on node1".
func (s Status) Line(name string) string {
	head := fmt.Sprintf("job %s %s: %s", s.ID, name, s.State)
	switch {
	case s.Phase == Pending && s.Reason != "" && s.Reason != "None":
		return head + " (" + s.Reason + ")"
	case s.Node != "" && s.Phase != Pending:
		return head + " on " + s.Node
	}
	return head
}

package slurm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
)

// Name is the scheduler's name: its block's type, its rows' batch_scheduler.
const Name = "slurm"

// Kind is Slurm as apply registers it: the slurm { } block, the Scheduler that submits
// its cells with sbatch, and the job a node-side apply runs in.
var Kind = placement.Kind{
	Block: plan.PlacementKind{Name: Name, Scheduler: "Slurm", Jobs: "Slurm jobs", Schemas: map[string]*hcl.BodySchema{"": blockSchema}, Decode: decode, Object: object},
	New: func(s placement.Setup) placement.Scheduler {
		return NewScheduler(s.Plan.Path, s.Vars, s.VarFiles, Cells(s.Cells))
	},
	InJob: inJob,
}

// sstatTimeout bounds one sstat (or scontrol) call: it asks the controller, then the
// node's step daemon, which takes milliseconds unless the controller is busy.
const sstatTimeout = 10 * time.Second

// job is the Slurm job step a node-side apply runs in, whose memory sstat reads.
type job struct {
	step  string    // "41.batch"
	start time.Time // when the job started; zero when scontrol did not say
}

// inJob is the job of the environment Slurm gives a job's processes; nil outside one.
func inJob(getenv func(string) string) placement.InJob {
	step := stepOf(getenv)
	if step == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sstatTimeout)
	defer cancel()
	id, _, _ := strings.Cut(step, ".")
	start, _ := JobStart(ctx, id) // zero when unknown: the row then says less
	return &job{step: step, start: start}
}

// stepOf is the job step of the environment Slurm gives a job's processes:
// "<job>.batch" in a batch script, "<job>.<step>" under srun; "" outside a job.
func stepOf(getenv func(string) string) string {
	id := getenv("SLURM_JOB_ID")
	if id == "" {
		return ""
	}
	if s := getenv("SLURM_STEP_ID"); s != "" {
		return id + "." + s
	}
	return id + ".batch"
}

// Agents are the tasks of one srun step of the job (sbatch asked for the tasks).
func (j *job) Agents(a placement.AgentStart) (placement.Agents, error) {
	return placement.Agents{Launcher: fleet.Srun{Srun: []string{"srun"}, Planrun: a.Self}, Options: a.Remote, Shared: true,
		Where: "srun tasks of this Slurm job"}, nil
}

// JobMemory is sstat's reading of the job's step: AveRSS now, MaxRSS since it began.
func (j *job) JobMemory(ctx context.Context) (placement.JobMemory, error) {
	ctx, cancel := context.WithTimeout(ctx, sstatTimeout)
	defer cancel()
	sm, err := ReadStepMemory(ctx, j.step)
	return placement.JobMemory{Resident: sm.AveRSS, Peak: sm.MaxRSS}, err
}

// MemorySource says the figure is the whole job's and since when.
func (j *job) MemorySource() string {
	since := "since the job started"
	if !j.start.IsZero() {
		since += " at " + j.start.Format(time.RFC3339)
	}
	return fmt.Sprintf("%s %s: the whole job (planrun's client and the servers it started), peak %s", MemorySource, j.step, since)
}

var _ placement.WithJobMemory = (*job)(nil)

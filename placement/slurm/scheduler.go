package slurm

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/planrun/planrun/placement"
)

// Scheduler is apply's placement.Scheduler over Slurm (sbatch, scontrol, sacct, scancel) for
// the cells it was made with.
type Scheduler struct {
	planPath       string
	vars, varFiles []string
	cells          []Cell
	// specs are the jobs Jobs made, by directory (unique per job); read-only after Jobs.
	specs map[string]JobSpec
}

// NewScheduler returns the scheduler of one apply: its plan file, -var and -var-file
// values, and its selected cells (those without Settings are not Slurm's).
func NewScheduler(planPath string, vars, varFiles []string, cells []Cell) *Scheduler {
	return &Scheduler{planPath: planPath, vars: vars, varFiles: varFiles, cells: cells, specs: map[string]JobSpec{}}
}

// Name is "slurm".
func (s *Scheduler) Name() string { return "slurm" }

// Check says, before anything is submitted, whether hardware's cells can be: sbatch must
// be on PATH.
func (s *Scheduler) Check(hardware string) error { return checkSbatch(hardware) }

// Jobs groups the cells with these ids as NewJobs does.
func (s *Scheduler) Jobs(cellIDs []string, runDir string) ([]placement.Job, error) {
	var cells []Cell
	for _, c := range s.cells {
		if slices.Contains(cellIDs, c.ID) {
			cells = append(cells, c)
		}
	}
	specs, err := NewJobs(s.planPath, cells, s.vars, s.varFiles, runDir)
	if err != nil {
		return nil, err
	}
	jobs := make([]placement.Job, len(specs))
	for i, spec := range specs {
		s.specs[spec.Dir] = spec
		jobs[i] = placement.Job{Name: spec.Name, Hardware: spec.Hardware, CellIDs: spec.CellIDs, Dir: spec.Dir}
	}
	return jobs, nil
}

func (s *Scheduler) spec(job placement.Job) (JobSpec, error) {
	spec, ok := s.specs[job.Dir]
	if !ok {
		return spec, fmt.Errorf("slurm: job %s (%s) was not made by Jobs", job.Name, job.Dir)
	}
	return spec, nil
}

// Submit writes the job's batch script into its directory and submits it with sbatch
// --parsable, returning Slurm's job id; an error quotes sbatch's message. The job
// inherits this process's environment (--export=ALL), API keys included.
func (s *Scheduler) Submit(ctx context.Context, job placement.Job) (string, error) {
	spec, err := s.spec(job)
	if err != nil {
		return "", err
	}
	return submit(ctx, spec)
}

// State asks Slurm for the job's state, as the coordinator acts on it: scontrol while the
// controller knows the job (pending, running, and MinJobAge after it ends), then sacct -c
// from the job-completion log.
func (s *Scheduler) State(ctx context.Context, id string) (placement.Status, error) {
	st, err := jobState(ctx, id)
	return st.Batch(), err
}

// Cancel scancels the job and waits, polling squeue, until it is not listed any more (or
// ctx ends).
func (s *Scheduler) Cancel(ctx context.Context, id string) error { return cancel(ctx, []string{id}) }

// WaitShared waits until the job's script has written its marker into the job's
// directory, which proves the node sees the coordinator's run directory. It fails, naming
// the directory, when the job ends without writing it or when timeout passes while the
// job runs (a pending job's wait is ctx's).
func (s *Scheduler) WaitShared(ctx context.Context, job placement.Job, id string, timeout time.Duration) error {
	spec, err := s.spec(job)
	if err != nil {
		return err
	}
	_, err = waitShared(ctx, spec, id, timeout)
	return err
}

// LogPath is the job's slurm-ID.out.
func (s *Scheduler) LogPath(job placement.Job, id string) string {
	return JobSpec{Dir: job.Dir}.LogPath(id)
}

// Close does nothing: a Slurm job apply still follows is cancelled by the coordinator.
func (s *Scheduler) Close(context.Context) error { return nil }

var _ placement.Scheduler = (*Scheduler)(nil)

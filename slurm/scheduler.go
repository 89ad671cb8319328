package slurm

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/planrun/planrun/batch"
)

// Scheduler is apply's batch.Scheduler over Slurm: NewJobs, Submit, JobState, Cancel and
// WaitShared for the cells it was made with.
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

// Check is CheckSbatch.
func (s *Scheduler) Check(hardware string) error { return CheckSbatch(hardware) }

// Jobs groups the cells with these ids as NewJobs does.
func (s *Scheduler) Jobs(cellIDs []string, runDir string) ([]batch.Job, error) {
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
	jobs := make([]batch.Job, len(specs))
	for i, spec := range specs {
		s.specs[spec.Dir] = spec
		jobs[i] = batch.Job{Name: spec.Name, Hardware: spec.Hardware, CellIDs: spec.CellIDs, Dir: spec.Dir}
	}
	return jobs, nil
}

func (s *Scheduler) spec(job batch.Job) (JobSpec, error) {
	spec, ok := s.specs[job.Dir]
	if !ok {
		return spec, fmt.Errorf("slurm: job %s (%s) was not made by Jobs", job.Name, job.Dir)
	}
	return spec, nil
}

// Submit writes the job's batch script and submits it (see the function Submit).
func (s *Scheduler) Submit(ctx context.Context, job batch.Job) (string, error) {
	spec, err := s.spec(job)
	if err != nil {
		return "", err
	}
	return Submit(ctx, spec)
}

// State is JobState, as the coordinator acts on it.
func (s *Scheduler) State(ctx context.Context, id string) (batch.Status, error) {
	st, err := JobState(ctx, id)
	return st.Batch(), err
}

// Cancel scancels the job and waits until squeue no longer lists it.
func (s *Scheduler) Cancel(ctx context.Context, id string) error { return Cancel(ctx, []string{id}) }

// WaitShared waits for the job's marker (see the function WaitShared).
func (s *Scheduler) WaitShared(ctx context.Context, job batch.Job, id string, timeout time.Duration) error {
	spec, err := s.spec(job)
	if err != nil {
		return err
	}
	_, err = WaitShared(ctx, spec, id, timeout)
	return err
}

// LogPath is the job's slurm-ID.out.
func (s *Scheduler) LogPath(job batch.Job, id string) string {
	return JobSpec{Dir: job.Dir}.LogPath(id)
}

var _ batch.Scheduler = (*Scheduler)(nil)

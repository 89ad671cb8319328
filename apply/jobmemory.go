package apply

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement/slurm"
)

// slurmJob is the Slurm job step a node-side apply runs in (Options.SlurmStep), whose
// memory sstat reads around every level.
type slurmJob struct {
	step  string    // "41.batch"
	start time.Time // when the job started; zero when scontrol did not say
}

// sstatTimeout bounds one sstat (or scontrol) call: it asks the controller, then the
// node's step daemon, which takes milliseconds unless the controller is busy.
const sstatTimeout = 10 * time.Second

// newSlurmJob is the job of step ("41.batch"), nil for none.
func newSlurmJob(step string) *slurmJob {
	if step == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sstatTimeout)
	defer cancel()
	id, _, _ := strings.Cut(step, ".")
	start, _ := slurm.JobStart(ctx, id) // zero when unknown: the row then says less
	return &slurmJob{step: step, start: start}
}

// jobMemory is a Slurm job's memory around one level: sstat of its step when the level
// began and when it ended.
type jobMemory struct {
	Step          string
	Start         time.Time
	Before, After slurm.StepMemory
	// BeforeErr and AfterErr say why a reading failed; empty when it was read.
	BeforeErr, AfterErr string
}

// jobMonitor reads, on a Slurm job's node, the whole job's memory through sstat: its RSS
// as the level begins and its MaxRSS as it ends. It reads the job, not a process tree:
// planrun's own client counts, and MaxRSS is the peak since the job began.
type jobMonitor struct {
	job *slurmJob
	mem jobMemory
}

func (j *jobMonitor) start(ctx context.Context) {
	j.mem = jobMemory{Step: j.job.step, Start: j.job.start}
	j.mem.Before, j.mem.BeforeErr = readStep(ctx, j.job.step)
}

func (j *jobMonitor) stop(m *levelMeasurement) {
	// Not the level's context: an interrupted level still gets its reading.
	j.mem.After, j.mem.AfterErr = readStep(context.Background(), j.job.step)
	m.Job = j.mem
}

func readStep(ctx context.Context, step string) (slurm.StepMemory, string) {
	ctx, cancel := context.WithTimeout(ctx, sstatTimeout)
	defer cancel()
	sm, err := slurm.ReadStepMemory(ctx, step)
	if err != nil {
		return sm, err.Error()
	}
	return sm, ""
}

// setJobMemory fills the row's Slurm job memory columns, saying what the figure covers
// and whether its peak fell in this level.
func setJobMemory(row *ledger.Row, j jobMemory) {
	if j.Step == "" {
		return
	}
	if j.AfterErr != "" {
		row.MemJobSource = "none: " + j.AfterErr
		return
	}
	row.MemJobPeakGB = float64(j.After.MaxRSS) / 1e9
	since := "since the job started"
	if !j.Start.IsZero() {
		since += " at " + j.Start.Format(time.RFC3339)
	}
	var when string
	switch {
	case j.BeforeErr != "":
		row.MemJobBaselineGB = math.NaN()
		when = "not read as the level began (" + j.BeforeErr + "), so it may have been reached before it"
	case j.After.MaxRSS > j.Before.MaxRSS:
		row.MemJobBaselineGB = float64(j.Before.AveRSS) / 1e9
		when = "reached during this level"
	default:
		row.MemJobBaselineGB = float64(j.Before.AveRSS) / 1e9
		when = "reached before this level began: this level's own peak is at most this"
	}
	row.MemJobSource = fmt.Sprintf("%s %s: the whole job (planrun's client and the servers it started), peak %s, %s",
		slurm.MemorySource, j.Step, since, when)
}

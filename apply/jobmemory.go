package apply

import (
	"context"
	"fmt"
	"math"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/placement"
)

// jobMemory is a batch job's memory around one level, as its scheduler reads it when the
// level began and when it ended (placement.WithJobMemory).
type jobMemory struct {
	// Source is the scheduler's MemorySource; empty outside such a job.
	Source        string
	Before, After placement.JobMemory
	// BeforeErr and AfterErr say why a reading failed; empty when it was read.
	BeforeErr, AfterErr string
}

// jobMonitor reads, on a batch job's node, the whole job's memory: what it holds as the
// level begins and its peak as it ends. It reads the job, not a process tree: planrun's
// own client counts, and the peak is the job's since it began.
type jobMonitor struct {
	job placement.WithJobMemory
	mem jobMemory
}

func (j *jobMonitor) start(ctx context.Context) {
	j.mem = jobMemory{Source: j.job.MemorySource()}
	j.mem.Before, j.mem.BeforeErr = readJobMemory(ctx, j.job)
}

func (j *jobMonitor) stop(m *levelMeasurement) {
	// Not the level's context: an interrupted level still gets its reading.
	j.mem.After, j.mem.AfterErr = readJobMemory(context.Background(), j.job)
	m.Job = j.mem
}

func readJobMemory(ctx context.Context, j placement.WithJobMemory) (placement.JobMemory, string) {
	mem, err := j.JobMemory(ctx)
	if err != nil {
		return mem, err.Error()
	}
	return mem, ""
}

// setJobMemory fills the row's job memory columns, saying what the figure covers and
// whether its peak fell in this level.
func setJobMemory(row *ledger.Row, j jobMemory) {
	if j.Source == "" {
		return
	}
	if j.AfterErr != "" {
		row.MemJobSource = "none: " + j.AfterErr
		return
	}
	row.MemJobPeakGB = float64(j.After.Peak) / 1e9
	var when string
	switch {
	case j.BeforeErr != "":
		row.MemJobBaselineGB = math.NaN()
		when = "not read as the level began (" + j.BeforeErr + "), so it may have been reached before it"
	case j.After.Peak > j.Before.Peak:
		row.MemJobBaselineGB = float64(j.Before.Resident) / 1e9
		when = "reached during this level"
	default:
		row.MemJobBaselineGB = float64(j.Before.Resident) / 1e9
		when = "reached before this level began: this level's own peak is at most this"
	}
	row.MemJobSource = fmt.Sprintf("%s, %s", j.Source, when)
}

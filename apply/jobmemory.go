package apply

import (
	"context"

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

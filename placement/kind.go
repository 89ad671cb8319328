package placement

import (
	"context"

	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/plan"
)

// Kind is one batch scheduler as planrun registers it (apply's table lists them): the
// hardware sub-block it owns, which plan keeps as a body and the kind decodes; the
// Scheduler the coordinator hands that block's cells to; and, on a job's node, the job
// the cells run in. A new scheduler is a package that exports its Kind, and one line in
// that table.
type Kind struct {
	Block plan.PlacementKind
	// New is the coordinator's side: the scheduler of one run.
	New func(Setup) Scheduler
	// InJob is the node side: the job this process runs in, as its scheduler started it
	// (read from the environment the scheduler gave it through getenv); nil when it is
	// not in one (an apply -run-dir given by hand).
	InJob func(getenv func(string) string) InJob
	// Missing, when set, says why this build places no cells on the scheduler (a build
	// tag left its client out): New's scheduler then refuses them before anything is
	// sent, and planrun version says so.
	Missing string
}

// Setup is what a scheduler is made with: the plan, the run's selected cells (of every
// placement: each scheduler takes those of its own block), and the -var and -var-file
// values the plan was loaded with, which a job's node loads it with again.
type Setup struct {
	Plan           *plan.Plan
	Cells          []*plan.Cell
	Vars, VarFiles []string
}

// InJob is the job a node-side apply (apply -run-dir, as the job's command) runs its
// cells in. Capabilities some schedulers have are interfaces of their own beside it
// (WithJobMemory).
type InJob interface {
	// Agents is how the load agents of a cell of several start inside the job.
	Agents(AgentStart) (Agents, error)
}

// AgentStart is what InJob.Agents is given.
type AgentStart struct {
	Cell *plan.Cell
	// Command runs one agent on this machine; Self is this planrun's path.
	Command []string
	Self    string
	// Remote are the fleet's listening options for agents on other machines: every
	// address, advertised as the agents block's lead or this machine's name.
	Remote fleet.Options
}

// Agents is how a cell's load agents start: the launcher and the fleet's listening
// options, whether the agents share the run's filesystem (their own record files are
// then kept beside the run's), and where they start, for the progress note.
type Agents struct {
	Launcher fleet.Launcher
	Options  fleet.Options
	Shared   bool
	Where    string
}

// WithJobMemory is an InJob whose scheduler reads the whole job's memory (Slurm: sstat
// of the job's step), which apply reads as each level begins and ends and records on
// its row.
type WithJobMemory interface {
	InJob
	// JobMemory reads the job's memory now.
	JobMemory(ctx context.Context) (JobMemory, error)
	// MemorySource says what JobMemory reads, for the row: "sstat MaxRSS of job step
	// 41.batch: the whole job (...), peak since the job started at T".
	MemorySource() string
}

// JobMemory is a job's memory as its scheduler reads it, in bytes: what it holds now
// (Slurm's AveRSS of its step) and its peak since the job began (MaxRSS).
type JobMemory struct {
	Resident, Peak uint64
}

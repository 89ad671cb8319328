package slurm

// Settings are a hardware block's slurm { ... } settings, as sbatch options. Empty
// strings are options left to the cluster's defaults. Kind decodes them from the block
// (block.go); plan keeps them as the hardware's Batch.Settings.
type Settings struct {
	Partition  string
	GPUs       string // --gpus, e.g. "1" or "h200:2"
	GRES       string // --gres, e.g. "gpu:a100:1"; exclusive with GPUs
	Constraint string
	Account    string
	QOS        string
	Time       string // Slurm's own syntax: "30", "1:30:00", "2-00:00:00"
	SbatchArgs []string
	// Jobs is JobsPerHardware (one job runs all the block's cells, in plan order) or
	// JobsPerCell.
	Jobs string
	// PlanrunPath is the planrun binary on the nodes; empty means the submitting
	// planrun's own path (the cluster shares it).
	PlanrunPath string
}

// The values of Settings.Jobs.
const (
	JobsPerHardware = "per_hardware"
	JobsPerCell     = "per_cell"
)

// Cell is one cell as NewJobs groups it: its id, its hardware block's name, that
// block's settings (nil when its cells are not placed on Slurm), and its load agents
// (its workload's agents: each a task of the job).
type Cell struct {
	ID, Hardware string
	Settings     *Settings
	Agents       int
}

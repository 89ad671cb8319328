package slurm

import (
	"regexp"
	"slices"

	"github.com/planrun/planrun/internal/suggest"
	"github.com/planrun/planrun/plan"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// The hardware block's slurm { } sub-block, which plan keeps as a body and Kind decodes
// here.

var blockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "partition"}, {Name: "gpus"}, {Name: "gres"}, {Name: "constraint"}, {Name: "account"},
		{Name: "qos"}, {Name: "time"}, {Name: "sbatch_args"}, {Name: "jobs"}, {Name: "planrun_path"},
	},
}

var jobsModes = []string{JobsPerHardware, JobsPerCell}

// slurmTime is sbatch's --time syntax: minutes, [days-]hours:minutes[:seconds], or
// minutes:seconds; "UNLIMITED"/"INFINITE" leave the partition's limit.
var slurmTime = regexp.MustCompile(`^(\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+(:\d+(:\d+)?)?|UNLIMITED|INFINITE)$`)

// decode decodes a slurm block, and refuses an agents block that lists hosts beside it:
// a cell's agents are tasks of its job, on the nodes Slurm picks.
func decode(b *plan.BatchDecoder) plan.BatchSettings {
	s := &Settings{Jobs: JobsPerHardware}
	a := b.Content(blockSchema).Attributes
	b.Decode(a["partition"], &s.Partition)
	b.Decode(a["gpus"], &s.GPUs)
	b.Decode(a["gres"], &s.GRES)
	b.Decode(a["constraint"], &s.Constraint)
	b.Decode(a["account"], &s.Account)
	b.Decode(a["qos"], &s.QOS)
	b.Decode(a["planrun_path"], &s.PlanrunPath)
	if a["gpus"] != nil && a["gres"] != nil {
		b.Errorf(a["gres"].NameRange.Ptr(), "Conflicting arguments",
			"gpus (at %s) and gres both request GPUs; give one: gpus = \"2\" or gres = \"gpu:2\".", a["gpus"].NameRange)
	}
	if b.Decode(a["time"], &s.Time) && !slurmTime.MatchString(s.Time) {
		b.Errorf(a["time"].Expr.Range().Ptr(), "Invalid time",
			"time is sbatch's time limit: minutes (\"30\"), \"HH:MM:SS\" or \"D-HH:MM:SS\", not %q.", s.Time)
	}
	b.Decode(a["sbatch_args"], &s.SbatchArgs)
	if b.Decode(a["jobs"], &s.Jobs) && !slices.Contains(jobsModes, s.Jobs) {
		b.Errorf(a["jobs"].Expr.Range().Ptr(), "Invalid jobs",
			"jobs is %q (one batch job runs all this hardware's cells, in plan order) or %q (one job per cell), not %q.%s",
			JobsPerHardware, JobsPerCell, s.Jobs, suggest.DidYouMean(s.Jobs, jobsModes))
	}
	if h := b.Hardware; h.Agents != nil && len(h.Agents.Hosts) > 0 {
		b.Errorf(h.Agents.HostsAt().Ptr(), "Conflicting placement",
			"Hardware %q runs its cells as Slurm jobs (its slurm block at %s): its agents are tasks of the cell's job, on the nodes Slurm picks, not hosts listed here.", h.Name, b.Block.DefRange)
	}
	return s
}

// object is the block as expressions read it (hardware.slurm): the settings that say
// where the jobs go, empty for a hardware block without one.
func object(bs plan.BatchSettings) cty.Value {
	s, _ := bs.(*Settings)
	if s == nil {
		s = &Settings{}
	}
	return cty.ObjectVal(map[string]cty.Value{
		"partition": cty.StringVal(s.Partition),
		"account":   cty.StringVal(s.Account),
		"qos":       cty.StringVal(s.QOS),
	})
}

// String says where the cells run, as planrun plan shows it.
func (s *Settings) String() string {
	if s.Partition == "" {
		return "Slurm default partition"
	}
	return "Slurm partition " + s.Partition
}

// Cells lists a plan's cells as NewJobs groups them: a cell whose hardware is not
// placed on Slurm goes with no settings.
func Cells(cells []*plan.Cell) []Cell {
	out := make([]Cell, len(cells))
	for i, c := range cells {
		out[i].ID, out[i].Agents = c.ID, c.Workload.Agents
		if h := c.Hardware; h != nil {
			out[i].Hardware = h.Name
			if h.Batch != nil {
				out[i].Settings, _ = h.Batch.Settings.(*Settings)
			}
		}
	}
	return out
}

package apply

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/placement/kube"
	"github.com/planrun/planrun/placement/slurm"
	"github.com/planrun/planrun/plan"
)

// placements are the batch schedulers planrun hands cells to, each by the sub-block of a
// hardware block it owns (slurm { }, kubernetes { }); cells of any other placement
// (local, host) run on this machine. A new scheduler is one package that exports its
// placement.Kind, and one entry here.
var placements = []placement.Kind{slurm.Kind, kube.Kind}

// Placements are the schedulers' blocks, for plan.LoadOptions: a plan is loaded with
// them wherever it is loaded, so each block is decoded by the scheduler that owns it.
func Placements() []plan.PlacementKind {
	out := make([]plan.PlacementKind, len(placements))
	for i, k := range placements {
		out[i] = k.Block
	}
	return out
}

// Build says which schedulers this build places cells on, and why it places none on a
// scheduler its build left out: "slurm, kubernetes", or "slurm; not kubernetes: ...".
func Build() string {
	var have, missing []string
	for _, k := range placements {
		if k.Missing != "" {
			missing = append(missing, "not "+k.Block.Name+": "+k.Missing)
			continue
		}
		have = append(have, k.Block.Name)
	}
	return strings.Join(append([]string{strings.Join(have, ", ")}, missing...), "; ")
}

// closeSchedulers lets each scheduler release what it still holds for the run (the
// Kubernetes one deletes the run's objects), however the run ended.
func closeSchedulers(scheds map[plan.Placement]placement.Scheduler, note func(string, ...any)) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range scheds {
		if err := s.Close(ctx); err != nil {
			note("%s: cleaning up the run's jobs: %v", s.Name(), err)
		}
	}
}

// schedulers are the run's schedulers: Options.Schedulers, or else one of each placement.
func schedulers(o Options) map[plan.Placement]placement.Scheduler {
	if o.Schedulers != nil {
		return o.Schedulers
	}
	setup := placement.Setup{Plan: o.Plan, Cells: o.Cells, Vars: o.Vars, VarFiles: o.VarFiles}
	m := make(map[plan.Placement]placement.Scheduler, len(placements))
	for _, k := range placements {
		m[plan.Placement(k.Block.Name)] = k.New(setup)
	}
	return m
}

// inJob is the batch job a node-side run (Options.RunDir) runs its cells in, as the
// scheduler of their hardware's block started it; nil elsewhere, and for a run directory
// given by hand.
func inJob(o Options) placement.InJob {
	if o.RunDir == "" {
		return nil
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, c := range o.Cells {
		if c.Hardware == nil || c.Hardware.Batch == nil {
			continue
		}
		for _, k := range placements {
			if k.Block.Name == c.Hardware.Batch.Kind && k.InJob != nil {
				return k.InJob(getenv)
			}
		}
	}
	return nil
}

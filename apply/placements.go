package apply

import (
	"context"
	"time"

	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/placement/kube"
	"github.com/planrun/planrun/placement/slurm"
	"github.com/planrun/planrun/plan"
)

// placements are the batch schedulers apply hands cells to, by the placement of their
// hardware block; cells of any other placement (local, host) run on this machine. A new
// scheduler is one package implementing placement.Scheduler and one line here.
var placements = map[plan.Placement]func(Options) placement.Scheduler{
	plan.PlaceSlurm: func(o Options) placement.Scheduler {
		return slurm.NewScheduler(o.Plan.Path, o.Vars, o.VarFiles, plan.SlurmCells(o.Cells))
	},
	plan.PlaceKubernetes: func(o Options) placement.Scheduler { return kube.NewScheduler(o.Plan, o.Cells) },
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
	m := make(map[plan.Placement]placement.Scheduler, len(placements))
	for kind, newScheduler := range placements {
		m[kind] = newScheduler(o)
	}
	return m
}

package apply

import (
	"context"
	"time"

	"github.com/planrun/planrun/batch"
	"github.com/planrun/planrun/kube"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/slurm"
)

// placements are the batch schedulers apply hands cells to, by the placement of their
// hardware block; cells of any other placement (local, host) run on this machine. A new
// scheduler is one package implementing batch.Scheduler and one line here.
var placements = map[plan.Placement]func(Options) batch.Scheduler{
	plan.PlaceSlurm: func(o Options) batch.Scheduler {
		return slurm.NewScheduler(o.Plan.Path, o.Vars, o.VarFiles, plan.SlurmCells(o.Cells))
	},
	plan.PlaceKubernetes: func(o Options) batch.Scheduler { return kube.NewScheduler(o.Plan, o.Cells) },
}

// kubernetesScheduler is the Kubernetes scheduler's Name: its rows and manifest entries
// have columns of their own.
const kubernetesScheduler = "kubernetes"

// closeSchedulers lets each scheduler release what it still holds for the run (the
// Kubernetes one deletes the run's objects), however the run ended.
func closeSchedulers(scheds map[plan.Placement]batch.Scheduler, note func(string, ...any)) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range scheds {
		if err := s.Close(ctx); err != nil {
			note("%s: cleaning up the run's jobs: %v", s.Name(), err)
		}
	}
}

// schedulers are the run's schedulers: Options.Schedulers, or else one of each placement.
func schedulers(o Options) map[plan.Placement]batch.Scheduler {
	if o.Schedulers != nil {
		return o.Schedulers
	}
	m := make(map[plan.Placement]batch.Scheduler, len(placements))
	for kind, newScheduler := range placements {
		m[kind] = newScheduler(o)
	}
	return m
}

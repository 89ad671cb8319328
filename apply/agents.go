package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/planrun/planrun/apply/pins"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
)

// A cell whose workload has agents = N > 1 runs its levels over N load agents (package
// agent): the cell is prepared here as any other (its server started, its backend
// probed, its prompt calibrated), then its agents are launched and handed the cell,
// and each level's runs go out from every agent at one start instant while the
// records are merged here, into the one sink, as if one process had sent them.

// startAgents launches the cell's agents where its placement runs them, measures their
// clocks and hands them the cell. An agent that cannot start is named in the error.
func (a *applier) startAgents(ctx context.Context, cell *plan.Cell, setup *cellSetup) (*fleet.Fleet, error) {
	n := cell.Workload.Agents
	dir := filepath.Join(a.rec.res.RunDir, "agents", cellDir(cell.ID))
	start, err := a.launcher(cell)
	if err != nil {
		return nil, err
	}
	o := start.Options
	o.Agents, o.Launcher, o.LogDir = n, start.Launcher, dir
	a.info("%s: starting %d load agents (%s)", cell.ID, n, start.Where)
	f, err := fleet.Start(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("its %d load agents did not start: %w", n, err)
	}
	records := ""
	if start.Shared { // the agents write their own records where this run can read them
		records = filepath.Join(dir, "agent-%d.jsonl")
	}
	if err := f.Assign(ctx, pins.BackendConfig(cell), setup.prompts, setup.shapes, a.o.Grace, cell.ID, a.rec.runID(), records,
		agentSources(cell)); err != nil {
		f.Close()
		return nil, fmt.Errorf("its load agents could not take the cell: %w", err)
	}
	return f, nil
}

// launcher is how the cell's agents start, with the fleet's listening options, and
// whether the agents share this run's filesystem (their own record files are then
// kept beside the run's):
//   - inside the batch job a node-side run is in, as its scheduler starts them (Slurm:
//     the tasks of one srun step of the job; Kubernetes: the indices of the cell's
//     Indexed Job, agent 0 here);
//   - on the hosts the hardware's agents block lists, one each, through ssh;
//   - otherwise as processes on this machine.
func (a *applier) launcher(cell *plan.Cell) (placement.Agents, error) {
	var ag plan.Agents
	if h := cell.Hardware; h != nil && h.Agents != nil {
		ag = *h.Agents
	}
	self, err := os.Executable()
	if err != nil {
		return placement.Agents{}, fmt.Errorf("cannot find planrun's own path for its agents: %w", err)
	}
	remote := fleet.Options{Listen: ":0", Advertise: ag.Lead}
	if remote.Advertise == "" {
		remote.Advertise, _ = os.Hostname()
	}
	cmd := a.o.AgentCommand
	if len(cmd) == 0 {
		cmd = []string{self, "agent"}
	}
	switch {
	case a.job != nil:
		return a.job.Agents(placement.AgentStart{Cell: cell, Command: cmd, Self: self, Remote: remote})
	case len(ag.Hosts) > 0:
		bin := ag.PlanrunPath
		if bin == "" {
			bin = self
		}
		return placement.Agents{Launcher: fleet.SSH{SSH: ag.SSH, Hosts: ag.Hosts, Planrun: bin}, Options: remote,
			Where: "ssh to " + strings.Join(ag.Hosts, ", ")}, nil
	}
	o := fleet.Options{Advertise: ag.Lead}
	if ag.Lead != "" {
		o.Listen = ":0"
	}
	return placement.Agents{Launcher: fleet.Local{Command: cmd}, Options: o, Shared: true, Where: "processes on this machine"}, nil
}

// agentSources are the source addresses the hardware's agents block gives its agents.
func agentSources(cell *plan.Cell) []string {
	if h := cell.Hardware; h != nil && h.Agents != nil {
		return h.Agents.SourceAddresses
	}
	return nil
}

// cellDir is a cell's id as one directory name.
func cellDir(id string) string { return strings.ReplaceAll(id, "/", "_") }

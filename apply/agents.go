package apply

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
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
	launcher, o, shared, err := a.launcher(cell)
	if err != nil {
		return nil, err
	}
	o.Agents, o.Launcher, o.LogDir = n, launcher, dir
	a.info("%s: starting %d load agents (%s)", cell.ID, n, describeLauncher(launcher))
	f, err := fleet.Start(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("its %d load agents did not start: %w", n, err)
	}
	records := ""
	if shared { // the agents write their own records where this run can read them
		records = filepath.Join(dir, "agent-%d.jsonl")
	}
	if err := f.Assign(ctx, backendConfig(cell), setup.prompts, setup.shapes, a.o.Grace, cell.ID, a.rec.runID(), records,
		agentSources(cell)); err != nil {
		f.Close()
		return nil, fmt.Errorf("its load agents could not take the cell: %w", err)
	}
	return f, nil
}

// launcher is how the cell's agents start, with the fleet's listening options, and
// whether the agents share this run's filesystem (their own record files are then
// kept beside the run's):
//   - on a Slurm job's node (apply -run-dir inside the job), as the tasks of one srun
//     step of the job (sbatch asked for the tasks);
//   - in index 0 of a Kubernetes Indexed Job (apply -run-dir in the pod), as the Job's
//     indices: agent 0 here, the others the pods Kubernetes started with it;
//   - on the hosts the hardware's agents block lists, one each, through ssh;
//   - otherwise as processes on this machine.
func (a *applier) launcher(cell *plan.Cell) (fleet.Launcher, fleet.Options, bool, error) {
	var ag plan.Agents
	if h := cell.Hardware; h != nil && h.Agents != nil {
		ag = *h.Agents
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fleet.Options{}, false, fmt.Errorf("cannot find planrun's own path for its agents: %w", err)
	}
	remote := func() fleet.Options {
		o := fleet.Options{Listen: ":0", Advertise: ag.Coordinator}
		if o.Advertise == "" {
			o.Advertise, _ = os.Hostname()
		}
		return o
	}
	cmd := a.o.AgentCommand
	if len(cmd) == 0 {
		cmd = []string{self, "agent"}
	}
	switch {
	case a.o.RunDir != "" && os.Getenv("SLURM_JOB_ID") != "" && cell.Hardware != nil && cell.Hardware.Slurm != nil:
		return fleet.Srun{Srun: []string{"srun"}, Planrun: self}, remote(), true, nil
	case a.o.RunDir != "" && os.Getenv("JOB_COMPLETION_INDEX") != "" && cell.Hardware != nil && cell.Hardware.Kubernetes != nil:
		l, o, err := indexedJob(cmd, cell.Hardware.Kubernetes.StartTimeout)
		return l, o, false, err
	case len(ag.Hosts) > 0:
		bin := ag.PlanrunPath
		if bin == "" {
			bin = self
		}
		return fleet.SSH{SSH: ag.SSH, Hosts: ag.Hosts, Planrun: bin}, remote(), false, nil
	}
	o := fleet.Options{Advertise: ag.Coordinator}
	if ag.Coordinator != "" {
		o.Listen = ":0"
	}
	return fleet.Local{Command: cmd}, o, true, nil
}

// indexedJob is the launcher of a cell's agents in index 0 of its Kubernetes Indexed
// Job (kube.Objects): the Job's pods are the agents, each its index, started by
// Kubernetes with this one. The Job's environment says where this coordinator listens
// (its pod's address and the Job's port), the name the other pods dial it by (the Job's
// headless Service) and the token they present (from the Job's Secret). Agent 0 runs
// here, with the coordinator; the others have the kubernetes block's start_timeout (at
// least the fleet's usual minute) to dial in, since a pod may wait that long for its node.
func indexedJob(cmd []string, startTimeout time.Duration) (fleet.Launcher, fleet.Options, error) {
	listen, coordinator, token := os.Getenv(fleet.EnvListen), os.Getenv(fleet.EnvCoordinator), os.Getenv(fleet.EnvToken)
	if listen == "" || coordinator == "" || token == "" {
		return nil, fleet.Options{}, fmt.Errorf("this pod of a Kubernetes Indexed Job lacks %s, %s or %s: its Job was not made by planrun apply for a cell of several agents",
			fleet.EnvListen, fleet.EnvCoordinator, fleet.EnvToken)
	}
	host, _, err := net.SplitHostPort(coordinator)
	if err != nil {
		return nil, fleet.Options{}, fmt.Errorf("%s=%q: %w", fleet.EnvCoordinator, coordinator, err)
	}
	o := fleet.Options{Listen: listen, Advertise: host, Token: token, Connect: max(startTimeout, fleet.ConnectTimeout)}
	return fleet.Scheduled{Command: cmd, Self: listen, Name: "kubernetes index"}, o, nil
}

// describeLauncher says where agents start, for the progress note.
func describeLauncher(l fleet.Launcher) string {
	switch l := l.(type) {
	case fleet.SSH:
		return "ssh to " + strings.Join(l.Hosts, ", ")
	case fleet.Srun:
		return "srun tasks of this Slurm job"
	case fleet.Scheduled:
		return "the pods of this Kubernetes Indexed Job, agent 0 in this one"
	}
	return "processes on this machine"
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

// agentRows sets a row's agent figures: how many agents sent it and the error bar of
// its figures that compare their clocks (send lag, arrival order, delivered rate, the
// window), with a note that says so.
func agentRows(row *ledger.Row, m levelMeasurement) []string {
	if m.AgentCount <= 1 {
		return nil
	}
	row.Agents = m.AgentCount
	row.ClockBoundMs = float64(m.ClockBound) / float64(time.Millisecond)
	return []string{fmt.Sprintf("%d load agents: send lag, arrival order, delivered rate and the window compare their clocks, each ± %s ms (the largest clock bound, drift included)",
		m.AgentCount, millis(m.ClockBound.Seconds()))}
}

// agentFidelity names the agents whose own share was client-bound: their client
// saturated (selfcheck), or their share of the load fell short by more than the
// tolerance while their own cap or slots had room (the client's own shortfall, as
// judgeFidelity reads a whole level's).
func agentFidelity(w *plan.Workload, level plan.LoadLevel, m levelMeasurement, meanTPOT time.Duration) (saturated, short []string) {
	for _, al := range m.Agents {
		name := fmt.Sprintf("agent %d (%s)", al.Index, al.Where)
		if al.Client != nil {
			if why := al.Client.Saturated(meanTPOT); why != "" {
				saturated = append(saturated, name+": "+why)
			}
		}
		if note := shareShortfall(w, level, m.AgentCount, al); note != "" {
			short = append(short, name+" "+note)
		}
	}
	return saturated, short
}

// shareShortfall is the note of an agent whose share of the load fell short by more
// than the tolerance for want of its own client ("" otherwise): a paced share whose
// rate fell short while its cap never filled, or a closed loop's share whose slots
// stood idle in the client.
func shareShortfall(w *plan.Workload, level plan.LoadLevel, n int, al fleet.AgentLevel) string {
	if len(al.Loads) == 0 || w.Session != nil {
		return ""
	}
	mean := func(f func(fleet.Load) float64) float64 {
		var vs []float64
		for _, l := range al.Loads {
			if v := f(l); !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return math.NaN()
		}
		s := 0.0
		for _, v := range vs {
			s += v
		}
		return s / float64(len(vs))
	}
	slots := executor.Share{Index: al.Index, Of: n}.Slots(level.Concurrency)
	var asked, got float64
	var unit string
	ownFault := false
	if level.RequestRate > 0 || w.Replay != nil {
		asked, got, unit = mean(func(l fleet.Load) float64 { return l.RateScheduled }), mean(func(l fleet.Load) float64 { return l.RateDelivered }), "requests/s"
		ownFault = slots == 0 || slices.MaxFunc(al.Loads, func(a, b fleet.Load) int { return int(a.InFlightMax - b.InFlightMax) }).InFlightMax < float64(slots)
	} else {
		asked, got, unit = float64(slots), mean(func(l fleet.Load) float64 { return l.InFlightHeld }), "in flight"
		idle := mean(func(l fleet.Load) float64 { return l.IdleHeld })
		ownFault = !math.IsNaN(idle) && (asked-got-idle)/asked <= w.FidelityTolerance+1e-9
	}
	if !(asked > 0) || math.IsNaN(got) {
		return ""
	}
	shortfall := 1 - got/asked
	if shortfall <= w.FidelityTolerance+1e-9 || !ownFault {
		return ""
	}
	return fmt.Sprintf("delivered %s %s of its share's %s (%.1f%% short)", fig(got), unit, fig(asked), shortfall*100)
}

// agentFaultRow is the row of a level a load agent failed: no figures, for the load the
// other agents delivered is not the load asked, and a failed row without requests, so
// -resume runs the whole level again. Their requests are in requests.jsonl.
func agentFaultRow(cell *plan.Cell, level plan.LoadLevel, rc rowContext, m levelMeasurement) ledger.Row {
	sent := m.Stats.Pooled.Requests
	row := unmeasuredRow(cell, level, rc, m.AgentFault, m.Started)
	row.Ended = m.Ended
	row.Agents = m.AgentCount
	row.Notes += fmt.Sprintf("; the level's %d load agents were stopped, and the %d measured requests they had finished are in requests.jsonl but in no figure: "+
		"a load short of an agent is not the load asked (-resume runs the level again)", m.AgentCount, sent)
	return row
}

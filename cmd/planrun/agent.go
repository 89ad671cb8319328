package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/load/fleet"
)

func init() {
	registerHidden("agent", "run as one load agent of a cell that several share (apply starts these)", runAgent)
}

// agentArgs are agent's flags; what they leave unset comes from the environment
// (agent.Config.Env), so a batch scheduler can start agent i of N with either.
type agentArgs struct {
	Cfg fleet.Config
	// Lead: agent 0 runs the planrun command Leader instead (a Kubernetes Indexed
	// Job's pods all run one command line; index 0's is the cell's apply).
	Lead   bool
	Leader []string
}

func parseAgent(env *Env, args []string) (*agentArgs, error) {
	a := &agentArgs{Cfg: fleet.Config{Index: -1}}
	c := &a.Cfg
	fs := newFlagSet(env, "agent", "", `Runs this process as one load agent of a cell that several agents share (a workload's
agents = N). planrun apply starts its agents itself (local processes, ssh to the hosts
listed, srun tasks of a Slurm job); a batch scheduler that starts them instead gives
each its lead (the planrun that runs the cell), index, count and token with these flags or the environment:
`+fleet.EnvLead+`, `+fleet.EnvIndex+` (else SLURM_PROCID or JOB_COMPLETION_INDEX),
`+fleet.EnvCount+` and `+fleet.EnvToken+`. The agent dials its lead, measures its
clock against it and sends what it is told; it exits when the lead says bye.
API keys come from the agent's own environment, never from the lead.

    planrun agent -lead -- COMMAND ARGS...

is every pod of a Kubernetes Indexed Job: index 0 runs planrun COMMAND ARGS (the cell's
apply, which coordinates the agents and runs agent 0 itself), the other indices are
agents that dial it.`)
	fs.StringVar(&c.Lead, "lead-addr", "", "the lead's `host:port`: the planrun that runs the cell")
	fs.StringVar(&c.Lead, "coordinator", "", "the name -lead-addr had before; deprecated")
	fs.IntVar(&c.Index, "index", -1, "this agent's index, from 0")
	fs.IntVar(&c.Of, "agents", 0, "how many agents share the cell")
	fs.StringVar(&c.Token, "token", "", "the run's token (prefer "+fleet.EnvToken+": a flag shows in ps)")
	fs.DurationVar(&c.Wait, "wait", 0, "keep dialing a lead that does not answer yet for up to `D`, a second apart (or "+fleet.EnvWait+")")
	fs.BoolVar(&a.Lead, "lead", false, "agent 0 runs the planrun command after -- instead (a Kubernetes Indexed Job's index 0)")
	if i := slices.Index(args, "--"); i >= 0 {
		args, a.Leader = args[:i], args[i+1:]
	}
	operands, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	switch {
	case len(operands) > 0:
		return nil, fmt.Errorf("unexpected argument %q", operands[0])
	case a.Lead && len(a.Leader) == 0:
		return nil, fmt.Errorf("-lead is followed by -- and the planrun command agent 0 runs: -lead -- apply ARGS")
	case !a.Lead && a.Leader != nil:
		return nil, fmt.Errorf("a command after -- is for -lead")
	}
	if err := c.Env(env.Getenv); err != nil {
		return nil, err
	}
	return a, nil
}

func runAgent(ctx context.Context, env *Env, args []string) int {
	a, err := parseAgent(env, args)
	if err != nil {
		return usageExit(env, "agent", err)
	}
	if a.Lead && a.Cfg.Index == 0 {
		return Main(ctx, env, a.Leader)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-env.Interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	a.Cfg.NewBackend, a.Cfg.Log = connect.New, env.Stderr
	if err := fleet.Serve(ctx, a.Cfg); err != nil && !errors.Is(err, fleet.ErrBye) {
		fmt.Fprintf(env.Stderr, "planrun agent %d: %v\n", a.Cfg.Index, err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitError
	}
	return exitOK
}

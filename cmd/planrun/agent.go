package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/planrun/planrun/agent"
	"github.com/planrun/planrun/backends/connect"
)

func init() {
	registerHidden("agent", "run as one load agent of a cell that several share (apply starts these)", runAgent)
}

// agentArgs are agent's flags; what they leave unset comes from the environment
// (agent.Config.Env), so a batch scheduler can start agent i of N with either.
type agentArgs struct {
	Cfg agent.Config
}

func parseAgent(env *Env, args []string) (*agentArgs, error) {
	a := &agentArgs{Cfg: agent.Config{Index: -1}}
	c := &a.Cfg
	fs := newFlagSet(env, "agent", "", `Runs this process as one load agent of a cell that several agents share (a workload's
agents = N). planrun apply starts its agents itself (local processes, ssh to the hosts
listed, srun tasks of a Slurm job); a batch scheduler that starts them instead gives
each its coordinator, index, count and token with these flags or the environment:
`+agent.EnvCoordinator+`, `+agent.EnvIndex+` (else SLURM_PROCID or JOB_COMPLETION_INDEX),
`+agent.EnvCount+` and `+agent.EnvToken+`. The agent dials the coordinator, measures its
clock against it and sends what it is told; it exits when the coordinator says bye.
API keys come from the agent's own environment, never from the coordinator.`)
	fs.StringVar(&c.Coordinator, "coordinator", "", "the coordinator's `host:port`")
	fs.IntVar(&c.Index, "index", -1, "this agent's index, from 0")
	fs.IntVar(&c.Of, "agents", 0, "how many agents share the cell")
	fs.StringVar(&c.Token, "token", "", "the run's token (prefer "+agent.EnvToken+": a flag shows in ps)")
	operands, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", operands[0])
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
	if err := agent.Serve(ctx, a.Cfg); err != nil && !errors.Is(err, agent.ErrBye) {
		fmt.Fprintf(env.Stderr, "planrun agent %d: %v\n", a.Cfg.Index, err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitError
	}
	return exitOK
}

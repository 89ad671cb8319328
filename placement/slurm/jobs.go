package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// state is a Slurm job state, reduced to the ones planrun acts on.
type state int

// The job states. Every state from Terminal on ends the job; only Completed means its
// script exited 0.
const (
	stateUnknown state = iota
	statePending
	stateRunning
	stateCompleting // the script ended; Slurm is cleaning up the node
	stateCompleted
	stateFailed
	stateTimeout
	stateCancelled
	stateNodeFail
	stateOutOfMemory
	statePreempted
	stateBootFail
	stateDeadline
)

var stateNames = []string{"UNKNOWN", "PENDING", "RUNNING", "COMPLETING", "COMPLETED", "FAILED", "TIMEOUT",
	"CANCELLED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE"}

// String is Slurm's own name for the state, as squeue prints it.
func (s state) String() string { return stateNames[s] }

// Terminal reports whether the job has ended (it will not run again).
func (s state) Terminal() bool { return s >= stateCompleted }

// parseState reads a state as squeue, scontrol or sacct print it ("CANCELLED by 0" too).
// States planrun does not act on (SUSPENDED, REQUEUED, ...) are stateUnknown.
func parseState(s string) state {
	name, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	name = strings.TrimSuffix(name, "+")
	for i, n := range stateNames {
		if n == name {
			return state(i)
		}
	}
	switch name {
	case "CONFIGURING":
		return statePending
	case "OOM":
		return stateOutOfMemory
	}
	return stateUnknown
}

// status is what Slurm says about one job.
type status struct {
	ID       string
	State    state
	Reason   string // why a pending job waits: Resources, Priority, ... ("None" when none)
	Node     string // the allocated node(s), once running
	ExitCode string // "code:signal" once ended
}

// errNoSbatch is returned when sbatch is not on PATH.
var errNoSbatch = errors.New("sbatch not on PATH")

// checkSbatch says, before anything is submitted, whether hardware's cells can be: sbatch
// must be on PATH.
func checkSbatch(hardware string) error {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return fmt.Errorf("hardware %q runs its cells as Slurm jobs, but %w: install Slurm's client commands (Debian: slurm-client) or run on a login node", hardware, errNoSbatch)
	}
	return nil
}

// submit writes job's batch script to job.ScriptPath() (creating job.Dir) and submits it
// with sbatch --parsable. It returns Slurm's job id; an error quotes sbatch's message.
// The job inherits this process's environment (--export=ALL), API keys included.
func submit(ctx context.Context, job JobSpec) (string, error) {
	if err := checkSbatch(job.Hardware); err != nil {
		return "", err
	}
	if err := os.MkdirAll(job.Dir, 0o755); err != nil {
		return "", fmt.Errorf("hardware %q: %w", job.Hardware, err)
	}
	if err := os.WriteFile(job.ScriptPath(), []byte(Script(job)), 0o755); err != nil {
		return "", fmt.Errorf("hardware %q: %w", job.Hardware, err)
	}
	out, err := run(ctx, "sbatch", "--parsable", job.ScriptPath())
	if err != nil {
		return "", fmt.Errorf("hardware %q: submitting %s: %w", job.Hardware, job.ScriptPath(), err)
	}
	// --parsable prints "id" or "id;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if id == "" {
		return "", fmt.Errorf("hardware %q: sbatch printed no job id", job.Hardware)
	}
	return id, nil
}

// jobState asks Slurm for a job's state: scontrol while the controller knows the job
// (pending, running, and MinJobAge after it ends), then sacct -c from the job-completion
// log.
func jobState(ctx context.Context, id string) (status, error) {
	out, err := run(ctx, "scontrol", "show", "job", "-o", id)
	if err == nil {
		return parseScontrol(id, out), nil
	}
	if !strings.Contains(err.Error(), "Invalid job id") {
		return status{ID: id}, err
	}
	out, err = run(ctx, "sacct", "-c", "-n", "-P", "-j", id, "-o", "jobid,state,nodelist,exitcode")
	if err != nil {
		return status{ID: id}, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) == 4 && f[0] == id {
			return status{ID: id, State: parseState(f[1]), Node: f[2], ExitCode: f[3]}, nil
		}
	}
	return status{ID: id}, fmt.Errorf("slurm job %s: neither scontrol nor sacct -c knows it", id)
}

// parseScontrol reads `scontrol show job -o`: one line of Key=Value fields.
func parseScontrol(id, out string) status {
	st := status{ID: id}
	for _, f := range strings.Fields(out) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "JobState":
			st.State = parseState(v)
		case "Reason":
			st.Reason = v
		case "NodeList":
			if v != "(null)" {
				st.Node = v
			}
		case "ExitCode":
			st.ExitCode = v
		}
	}
	return st
}

// cancel cancels the jobs with scancel and waits, polling squeue, until none of them is
// listed any more (or ctx ends).
func cancel(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := run(ctx, "scancel", ids...); err != nil {
		return err
	}
	for {
		out, err := run(ctx, "squeue", "-h", "-o", "%i", "-j", strings.Join(ids, ","))
		if err == nil && strings.TrimSpace(out) == "" {
			return nil
		}
		if err != nil && strings.Contains(err.Error(), "Invalid job id") {
			return nil // every one of them already forgotten
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slurm jobs %s still listed by squeue after scancel: %w", strings.Join(ids, ","), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// run runs a Slurm command; its error quotes what the command wrote to stderr.
func run(ctx context.Context, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return stdout.String(), fmt.Errorf("%s: %s", name, msg)
		}
		return stdout.String(), fmt.Errorf("%s: %w", name, err)
	}
	return stdout.String(), nil
}

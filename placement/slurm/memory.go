package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MemorySource begins the source of every figure read with ReadStepMemory, so tables
// can name it.
const MemorySource = "sstat MaxRSS of job step"

// StepMemory is what sstat says of a running job step's memory. Slurm's jobacct_gather
// plugin sums each task's process tree, every JobAcctGatherFrequency and whenever sstat
// asks; a batch step has one task, the batch script and everything it started.
type StepMemory struct {
	Step string // "41.batch"
	// MaxRSS is the largest RSS a task of the step reached since the step began, bytes.
	MaxRSS uint64
	// AveRSS is the tasks' RSS at the latest sampling, averaged over them: for a batch
	// step, its one task's RSS then.
	AveRSS uint64
	Tasks  int
}

// ReadStepMemory asks sstat for a running step's memory ("41.batch"). The cluster must
// gather job accounting (a JobAcctGatherType other than jobacct_gather/none); when it
// does not, the error says so.
func ReadStepMemory(ctx context.Context, step string) (StepMemory, error) {
	out, err := run(ctx, "sstat", "-n", "-P", "--noconvert", "-j", step, "--format=JobID,MaxRSS,AveRSS,NTasks")
	if err != nil {
		return StepMemory{Step: step}, err
	}
	m, err := parseSstat(step, out)
	if err == nil && m.MaxRSS == 0 {
		err = fmt.Errorf("sstat reports no memory for step %s", step)
	}
	if err != nil {
		if g := gatherType(ctx); g == "jobacct_gather/none" {
			err = fmt.Errorf("%w: the cluster gathers no job accounting (JobAcctGatherType=%s)", err, g)
		}
		return m, err
	}
	return m, nil
}

// parseSstat reads `sstat -n -P --noconvert --format=JobID,MaxRSS,AveRSS,NTasks`: one
// line per step, sizes in bytes (or with a K, M, G, T suffix where --noconvert is not
// honoured).
func parseSstat(step, out string) (StepMemory, error) {
	m := StepMemory{Step: step}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 4 || f[0] != step {
			continue
		}
		var err error
		if m.MaxRSS, err = parseSize(f[1]); err != nil {
			return m, fmt.Errorf("sstat MaxRSS of %s: %w", step, err)
		}
		if m.AveRSS, err = parseSize(f[2]); err != nil {
			return m, fmt.Errorf("sstat AveRSS of %s: %w", step, err)
		}
		m.Tasks, _ = strconv.Atoi(f[3])
		return m, nil
	}
	return m, fmt.Errorf("sstat printed no line for step %s (it answers for running steps only)", step)
}

// parseSize reads a Slurm memory figure: bytes, or a number with a binary suffix.
func parseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	mult := 1.0
	if i := strings.IndexAny(s, "KMGTP"); i == len(s)-1 {
		mult = float64(uint64(1) << (10 * (strings.IndexByte("KMGTP", s[i]) + 1)))
		s = s[:i]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a memory size", s)
	}
	return uint64(v * mult), nil
}

// gatherType is the cluster's JobAcctGatherType, "" when scontrol does not say.
func gatherType(ctx context.Context) string {
	out, err := run(ctx, "scontrol", "show", "config")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "JobAcctGatherType" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// JobStart is when a job started running, as scontrol says.
func JobStart(ctx context.Context, id string) (time.Time, error) {
	out, err := run(ctx, "scontrol", "show", "job", "-o", id)
	if err != nil {
		return time.Time{}, err
	}
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "StartTime="); ok {
			// scontrol writes the controller's local time without a zone.
			return time.ParseInLocation("2006-01-02T15:04:05", v, time.Local)
		}
	}
	return time.Time{}, fmt.Errorf("scontrol show job %s gave no StartTime", id)
}

// Package slurm runs a plan's Slurm-placed cells as batch jobs: it writes the batch script
// that runs `planrun apply` for those cells on the allocated node, submits it with sbatch,
// follows the job with scontrol (sacct -c once the controller has forgotten it), cancels
// it with scancel, and checks that the run directory is shared with the node. Scheduler
// is all of that as the placement.Scheduler that apply's coordinator follows jobs through.
//
// The node side of the contract: the script runs
//
//	planrun apply -quiet -run-dir DIR -only ID [-only ID ...] [-var-file F ...] [-var K=V ...] PLAN
//
// where DIR is the job's directory inside the coordinator's run directory (NodeRunDirFlag):
// apply uses it as its run directory, created when missing and resumed when it already
// holds a manifest of the same plan hash, and appends no row to the plan's CSV ledger,
// since the coordinator merges each job's rows into the one ledger. The plan path, the
// variable values and so the plan hash are the coordinator's own. API keys are never
// written: they reach the job in the environment Slurm propagates (--export=ALL).
package slurm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/shell"
)

// NodeRunDirFlag is the apply flag that names the job's run directory on the node.
const NodeRunDirFlag = "-run-dir"

// markerFile is written into the job's directory by the script before planrun starts, so
// the coordinator knows the node sees the run directory (see waitShared).
const markerFile = "node-ready"

// JobSpec is one batch job: some cells of one hardware block.
type JobSpec struct {
	// Name is the job's name within the plan: the hardware block's name, or
	// "<hardware>-<n>" for the n-th cell of a per_cell hardware block.
	Name     string
	Hardware string
	Settings Settings
	// PlanPath is the plan file (or directory) as the node must open it: absolute.
	PlanPath string
	// PlanName goes into the job name, planrun-<PlanName>-<Name>.
	PlanName string
	CellIDs  []string
	Vars     []string // -var values, "name=value", in the coordinator's order
	VarFiles []string // -var-file paths, absolute
	// Dir is the job's directory on the shared filesystem: script, log, marker, rows.
	Dir string
	// Planrun is the binary the node runs: Settings.PlanrunPath, or else this process's
	// own executable (see NewJobs).
	Planrun string
	// Tasks is the most load agents a cell of the job has (a workload's agents): the
	// job asks for that many tasks, and the node's planrun starts its agents as the
	// tasks of one srun step. 0 or 1: one task, planrun alone.
	Tasks int
}

// ScriptPath is where the scheduler's Submit writes the job's batch script.
func (j JobSpec) ScriptPath() string { return filepath.Join(j.Dir, "job.sh") }

// LogPath is the job's output file (stdout and stderr of the batch script) once Slurm has
// given it an id.
func (j JobSpec) LogPath(jobID string) string {
	return filepath.Join(j.Dir, "slurm-"+jobID+".out")
}

// JobName is the name the job has in squeue: planrun-<plan>-<job name>.
func (j JobSpec) JobName() string { return "planrun-" + j.PlanName + "-" + j.Name }

// NewJobs groups the Slurm-placed cells into batch jobs, in plan order: one job per
// hardware block, or one per cell where its slurm block says jobs = "per_cell". Cells
// placed elsewhere (no Settings) are left out. Each job's directory is
// <runDir>/slurm/<job name>.
func NewJobs(planPath string, cells []Cell, vars, varFiles []string, runDir string) ([]JobSpec, error) {
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find planrun's own path for the batch script (set planrun_path): %w", err)
	}
	files := make([]string, len(varFiles))
	for i, f := range varFiles {
		if files[i], err = filepath.Abs(f); err != nil {
			return nil, err
		}
	}
	planName := strings.TrimSuffix(filepath.Base(abs), ".hcl")
	var jobs []JobSpec
	byHardware := map[string]int{} // index into jobs of a per_hardware job
	perCell := map[string]int{}
	for _, c := range cells {
		if c.Settings == nil {
			continue
		}
		if i, ok := byHardware[c.Hardware]; ok {
			jobs[i].CellIDs = append(jobs[i].CellIDs, c.ID)
			jobs[i].Tasks = max(jobs[i].Tasks, c.Agents)
			continue
		}
		name := c.Hardware
		if c.Settings.Jobs == JobsPerCell {
			perCell[c.Hardware]++
			name = fmt.Sprintf("%s-%d", c.Hardware, perCell[c.Hardware])
		} else {
			byHardware[c.Hardware] = len(jobs)
		}
		bin := c.Settings.PlanrunPath
		if bin == "" {
			bin = self
		}
		jobs = append(jobs, JobSpec{
			Name: name, Hardware: c.Hardware, Settings: *c.Settings, PlanPath: abs, PlanName: planName,
			CellIDs: []string{c.ID}, Vars: vars, VarFiles: files,
			Dir: filepath.Join(runDir, "slurm", name), Planrun: bin, Tasks: c.Agents,
		})
	}
	return jobs, nil
}

// Script returns the batch script for job: #SBATCH lines from its settings, a marker
// written into the job's directory, then planrun apply for the job's cells.
func Script(job JobSpec) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "# Written by planrun: the cells of hardware %q of %s, run on the node Slurm allocates.\n", job.Hardware, job.PlanPath)
	b.WriteString("# API keys are not in this file: they come with the submitter's environment (--export).\n")
	for _, opt := range sbatchOptions(job) {
		fmt.Fprintf(&b, "#SBATCH %s\n", opt)
	}
	dir := shell.Quote(job.Dir)
	// The marker proves the node writes where the coordinator reads; a node that cannot
	// says so in the log, which the coordinator then names.
	fmt.Fprintf(&b, "if ! printf '%%s %%s\\n' \"$SLURM_JOB_ID\" \"$(hostname -s)\" > %s/%s; then\n", dir, markerFile)
	fmt.Fprintf(&b, "  echo \"planrun: the run directory %s is not writable on $(hostname -s): it must be on a filesystem shared with the submitting machine\" >&2\n", strings.ReplaceAll(job.Dir, `"`, `\"`))
	b.WriteString("  exit 3\nfi\n")
	args := []string{job.Planrun, "apply", "-quiet", NodeRunDirFlag, job.Dir}
	for _, id := range job.CellIDs {
		args = append(args, "-only", id)
	}
	for _, f := range job.VarFiles {
		args = append(args, "-var-file", f)
	}
	for _, v := range job.Vars {
		args = append(args, "-var", v)
	}
	args = append(args, job.PlanPath)
	for i, a := range args {
		args[i] = shell.Quote(a)
	}
	fmt.Fprintf(&b, "exec %s\n", strings.Join(args, " "))
	return b.String()
}

// sbatchOptions lists the job's sbatch options in the order the script states them.
func sbatchOptions(job JobSpec) []string {
	opts := []string{
		"--job-name=" + job.JobName(),
		"--output=" + filepath.Join(job.Dir, "slurm-%j.out"),
	}
	s := job.Settings
	for _, o := range []struct{ flag, value string }{
		{"partition", s.Partition}, {"gpus", s.GPUs}, {"gres", s.GRES}, {"constraint", s.Constraint},
		{"account", s.Account}, {"qos", s.QOS}, {"time", s.Time},
	} {
		if o.value != "" {
			opts = append(opts, "--"+o.flag+"="+o.value)
		}
	}
	if job.Tasks > 1 {
		// One task an agent: the node's planrun starts them with srun, within the job.
		opts = append(opts, "--ntasks="+strconv.Itoa(job.Tasks))
	}
	exported := false
	for _, a := range s.SbatchArgs {
		exported = exported || strings.HasPrefix(a, "--export")
	}
	if !exported {
		// ALL is Slurm's default too; stated, because the API keys depend on it.
		opts = append(opts, "--export=ALL")
	}
	return append(opts, s.SbatchArgs...)
}

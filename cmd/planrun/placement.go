package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/slurm"
)

// runsOn says where a cell runs, as `planrun plan` shows it.
func runsOn(c *plan.Cell) string {
	h := c.Hardware
	if h == nil {
		return "this machine"
	}
	switch h.Placement() {
	case plan.PlaceHost:
		return "host " + h.Host
	case plan.PlaceSlurm:
		if h.Slurm.Partition == "" {
			return "Slurm default partition"
		}
		return "Slurm partition " + h.Slurm.Partition
	}
	return "this machine"
}

func placement(c *plan.Cell) plan.Placement {
	if c.Hardware == nil {
		return plan.PlaceLocal
	}
	return c.Hardware.Placement()
}

// slurmRunDir stands for the run directory apply creates, in scripts printed for review.
const slurmRunDir = "RUN_DIR"

// writeSlurmScripts prints the batch script(s) apply would submit for hardware's cells:
// one, or one per cell for jobs = "per_cell".
func writeSlurmScripts(w io.Writer, p *plan.Plan, cells []*plan.Cell, f planFlags, hardware string) error {
	jobs, err := slurm.NewJobs(p.Path, plan.SlurmCells(cells), f.Vars, f.VarFiles, slurmRunDir)
	if err != nil {
		return err
	}
	var names []string
	n := 0
	for _, j := range jobs {
		if j.Hardware != hardware {
			if !slices.Contains(names, j.Hardware) {
				names = append(names, j.Hardware)
			}
			continue
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
		n++
		io.WriteString(w, slurm.Script(j))
	}
	if n > 0 {
		_, err := fmt.Fprintf(w, "# %s stands for the run directory apply creates.\n", slurmRunDir)
		return err
	}
	for _, h := range p.Hardware {
		if h.Name == hardware && h.Placement() != plan.PlaceSlurm {
			return fmt.Errorf("hardware %q has no slurm block: its cells run on %s", hardware, strings.TrimPrefix(runsOn(&plan.Cell{Hardware: h}), "Slurm "))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("no selected cell runs on Slurm: no hardware %q with a slurm block", hardware)
	}
	return fmt.Errorf("no selected cell of hardware %q runs on Slurm; the Slurm hardware of the selected cells: %s", hardware, strings.Join(names, ", "))
}

// slurmStep is the Slurm job step a node-side apply (-run-dir) runs in, from the
// environment Slurm gives it: "<job>.batch" in a batch script, "<job>.<step>" under srun;
// "" elsewhere.
func slurmStep(runDir string, env *Env) string {
	job := env.Getenv("SLURM_JOB_ID")
	if runDir == "" || job == "" {
		return ""
	}
	if step := env.Getenv("SLURM_STEP_ID"); step != "" {
		return job + "." + step
	}
	return job + ".batch"
}

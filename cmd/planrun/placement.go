package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/planrun/planrun/placement/kube"
	"github.com/planrun/planrun/placement/slurm"
	"github.com/planrun/planrun/plan"

	"sigs.k8s.io/yaml"
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
	case plan.PlaceKubernetes:
		return h.Kubernetes.String()
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
	return notPlaced(p, hardware, names, plan.PlaceSlurm, "Slurm", "slurm")
}

// notPlaced says why nothing was printed for hardware: it has no such block (block, its
// cells run elsewhere), or no selected cell of it runs on the scheduler; others are the
// scheduler's hardware blocks among the selected cells.
func notPlaced(p *plan.Plan, hardware string, others []string, place plan.Placement, scheduler, block string) error {
	for _, h := range p.Hardware {
		if h.Name == hardware && h.Placement() != place {
			return fmt.Errorf("hardware %q has no %s block: its cells run on %s", hardware, block, runsOn(&plan.Cell{Hardware: h}))
		}
	}
	sort.Strings(others)
	if len(others) == 0 {
		return fmt.Errorf("no selected cell runs on %s: no hardware %q with a %s block", scheduler, hardware, block)
	}
	return fmt.Errorf("no selected cell of hardware %q runs on %s; the %s hardware of the selected cells: %s", hardware, scheduler, scheduler, strings.Join(others, ", "))
}

// k8sRunID stands for the run apply creates, in manifests printed for review.
const k8sRunID = "RUN_ID"

// writeK8sManifests prints the objects apply would create for hardware's cells, as YAML
// documents: a ConfigMap and a Job per cell (or one pair for jobs = "per_hardware"), and
// for a cell of several load agents the Job's Secret and headless Service too.
func writeK8sManifests(w io.Writer, p *plan.Plan, cells []*plan.Cell, hardware string) error {
	jobs, err := kube.NewJobs(p, cells, k8sRunID, slurmRunDir)
	if err != nil {
		return err
	}
	var names []string
	n := 0
	secrets := false
	for _, j := range jobs {
		if j.Hardware != hardware {
			if !slices.Contains(names, j.Hardware) {
				names = append(names, j.Hardware)
			}
			continue
		}
		objs := kube.NewObjects(j)
		if objs.Secret != nil {
			secrets = true
		}
		for _, obj := range objs.All() {
			b, err := yaml.Marshal(obj)
			if err != nil {
				return err
			}
			if n > 0 {
				io.WriteString(w, "---\n")
			}
			n++
			w.Write(b)
		}
	}
	if n > 0 {
		_, err := fmt.Fprintf(w, "# %s stands for the run apply creates; the namespace is the context's when the block names none.\n", k8sRunID)
		if err == nil && secrets {
			_, err = fmt.Fprintf(w, "# apply puts a new random token in each Secret's key %q as it creates it: the agents present it to index 0.\n"+
				"# The names hash RUN_ID, and the lead's port (index 0's) is derived from the Job's name: both differ in each run.\n", kube.TokenKey)
		}
		return err
	}
	return notPlaced(p, hardware, names, plan.PlaceKubernetes, "Kubernetes", "kubernetes")
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

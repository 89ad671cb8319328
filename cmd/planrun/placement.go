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
)

// runsOn says where a cell runs, as `planrun plan` shows it.
func runsOn(c *plan.Cell) string {
	h := c.Hardware
	switch {
	case h == nil:
		return "this machine"
	case h.Batch != nil:
		return h.Batch.Settings.String()
	case h.Host != "":
		return "host " + h.Host
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
	jobs, err := slurm.NewJobs(p.Path, slurm.Cells(cells), f.Vars, f.VarFiles, slurmRunDir)
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
	return notPlaced(p, hardware, names, slurm.Name, "Slurm")
}

// notPlaced says why nothing was printed for hardware: it has no such block (block, its
// cells run elsewhere), or no selected cell of it runs on the scheduler; others are the
// scheduler's hardware blocks among the selected cells.
func notPlaced(p *plan.Plan, hardware string, others []string, block, scheduler string) error {
	for _, h := range p.Hardware {
		if h.Name == hardware && h.Placement() != plan.Placement(block) {
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
// documents (kube.Manifests).
func writeK8sManifests(w io.Writer, p *plan.Plan, cells []*plan.Cell, hardware string) error {
	docs, secrets, others, err := kube.Manifests(p, cells, hardware, k8sRunID, slurmRunDir)
	if err != nil {
		return err
	}
	for i, doc := range docs {
		if i > 0 {
			io.WriteString(w, "---\n")
		}
		w.Write(doc)
	}
	if len(docs) > 0 {
		_, err := fmt.Fprintf(w, "# %s stands for the run apply creates; the namespace is the context's when the block names none.\n", k8sRunID)
		if err == nil && secrets {
			_, err = fmt.Fprintf(w, "# apply puts a new random token in each Secret's key %q as it creates it: the agents present it to index 0.\n"+
				"# The names hash RUN_ID, and the lead's port (index 0's) is derived from the Job's name: both differ in each run.\n", kube.TokenKey)
		}
		return err
	}
	return notPlaced(p, hardware, others, kube.Name, "Kubernetes")
}

package slurm_test

import (
	"reflect"
	"testing"

	_ "github.com/planrun/planrun/backends/connect" // registers the kinds the plan names
	"github.com/planrun/planrun/placement/slurm"
	"github.com/planrun/planrun/plan"
)

// The slurm settings come out of plan's testdata/valid-files/placement.hcl as written
// there, with sbatch's defaults where the block says nothing.
func TestBlockSettings(t *testing.T) {
	p, diags := plan.Load("../../plan/testdata/valid-files/placement.hcl", plan.LoadOptions{Getenv: func(string) string { return "" },
		Vars: []string{"partition=gpu"}, Placements: []plan.PlacementKind{slurm.Kind.Block}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	hw := map[string]*plan.Hardware{}
	for _, h := range p.Hardware {
		hw[h.Name] = h
	}
	h200 := *hw["h200"].Batch.Settings.(*slurm.Settings)
	want := slurm.Settings{Partition: "gpu", GPUs: "1", Time: "1:00:00", Account: "bench", SbatchArgs: []string{"--mem=64G"},
		Jobs: slurm.JobsPerCell}
	if !reflect.DeepEqual(h200, want) {
		t.Errorf("h200 slurm = %+v\nwant %+v", h200, want)
	}
	if s := h200.String(); s != "Slurm partition gpu" {
		t.Errorf("String() = %q", s)
	}
	a100 := hw["a100"].Batch.Settings.(*slurm.Settings)
	if a100.Jobs != slurm.JobsPerHardware || a100.GRES != "gpu:a100:1" || a100.PlanrunPath != "/shared/bin/planrun" || a100.Constraint != "a100" || a100.QOS != "normal" {
		t.Errorf("a100 slurm = %+v", a100)
	}
}

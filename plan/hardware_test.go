package plan

import (
	"reflect"
	"testing"
)

// Placement and the slurm settings come out of testdata/valid-files/placement.hcl as
// written there, with sbatch's defaults where the block says nothing.
func TestHardwarePlacement(t *testing.T) {
	p, diags := Load("testdata/valid-files/placement.hcl", LoadOptions{Getenv: noEnv, Vars: []string{"partition=gpu"}})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	hw := map[string]*Hardware{}
	for _, h := range p.Hardware {
		hw[h.Name] = h
	}
	for name, want := range map[string]Placement{"laptop": PlaceLocal, "box": PlaceHost, "h200": PlaceSlurm, "a100": PlaceSlurm} {
		if got := hw[name].Placement(); got != want {
			t.Errorf("%s: placement %q, want %q", name, got, want)
		}
	}
	if got := hw["box"].Telemetry.DCGM; got != "http://gpu1.lab:9400/metrics" {
		t.Errorf("box dcgm = %q", got)
	}
	if hw["laptop"].Slurm != nil || hw["box"].Slurm != nil {
		t.Error("a hardware block without a slurm block has Slurm settings")
	}
	h200 := *hw["h200"].Slurm
	want := Slurm{Partition: "gpu", GPUs: "1", Time: "1:00:00", Account: "bench", SbatchArgs: []string{"--mem=64G"},
		Jobs: JobsPerCell, DeclRange: h200.DeclRange}
	if !reflect.DeepEqual(h200, want) {
		t.Errorf("h200 slurm = %+v\nwant %+v", h200, want)
	}
	a100 := hw["a100"].Slurm
	if a100.Jobs != JobsPerHardware || a100.GRES != "gpu:a100:1" || a100.PlanrunPath != "/shared/bin/planrun" || a100.Constraint != "a100" || a100.QOS != "normal" {
		t.Errorf("a100 slurm = %+v", a100)
	}
}

package plan

import (
	"strings"
	"testing"
)

// Placement comes out of testdata/valid-files/placement.hcl as written there (the slurm
// settings are slurm's to check: its TestBlockSettings).
func TestHardwarePlacement(t *testing.T) {
	p, diags := Load("testdata/valid-files/placement.hcl", LoadOptions{Getenv: noEnv, Vars: []string{"partition=gpu"}})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	hw := map[string]*Hardware{}
	for _, h := range p.Hardware {
		hw[h.Name] = h
	}
	for name, want := range map[string]Placement{"laptop": PlaceLocal, "box": PlaceHost, "h200": "slurm", "a100": "slurm"} {
		if got := hw[name].Placement(); got != want {
			t.Errorf("%s: placement %q, want %q", name, got, want)
		}
	}
	if got := hw["box"].Telemetry; got != (Telemetry{DCGM: "http://gpu1.lab:9400/metrics", Process: "http://gpu1.lab:9256/metrics", ProcessGroup: "vllm"}) {
		t.Errorf("box telemetry = %+v", got)
	}
	if hw["laptop"].Batch != nil || hw["box"].Batch != nil {
		t.Error("a hardware block without a slurm block has Slurm settings")
	}
	if b := hw["h200"].Batch; b == nil || b.Kind != "slurm" || b.Body == nil || b.Settings == nil || b.DeclRange.Start.Line == 0 {
		t.Errorf("h200's slurm block %+v", b)
	}
}

const perHostPlan = `
backend "openai" "vllm" { url = "http://127.0.0.1:8000/v1" }
hardware "a" { host = "gpu-a.lab" }
hardware "b" { host = "gpu-b.lab" }
workload "w" { prompt = "hi" }
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.vllm]
  hardware = [hardware.a, hardware.b]
  workload = [workload.w]
  url      = "http://${matrix.hardware.host}:8000/v1"
}
`

// A matrix's url gives each cell the URL of its own host; the backend block is unchanged.
func TestCellURLFollowsHardwareHost(t *testing.T) {
	p, diags := LoadFiles(t.TempDir(), map[string][]byte{"p.hcl": []byte(perHostPlan)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cells, diags := p.Cells()
	if diags.HasErrors() || len(cells) != 2 {
		t.Fatal(len(cells), diags)
	}
	for i, want := range []string{"http://gpu-a.lab:8000/v1", "http://gpu-b.lab:8000/v1"} {
		if got := cells[i].Backend.Config().URL; got != want {
			t.Errorf("cell %s: url %q, want %q", cells[i].ID, got, want)
		}
	}
	if p.Backends[0].URL != "http://127.0.0.1:8000/v1" {
		t.Errorf("the backend block's url changed to %q", p.Backends[0].URL)
	}

	bad := strings.Replace(perHostPlan, `"http://${matrix.hardware.host}:8000/v1"`, `"${matrix.hardware.host}:8000"`, 1)
	p, diags = LoadFiles(t.TempDir(), map[string][]byte{"p.hcl": []byte(bad)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// Both cells fail at the same place: one diagnostic, naming the first cell.
	if _, diags = p.Cells(); len(diags) != 1 || diags[0].Summary != "Invalid url" || diags[0].Subject.Start.Line != 11 {
		t.Errorf("diags = %v", diags)
	}
}

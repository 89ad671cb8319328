package cellsettings

import (
	"reflect"
	"testing"

	_ "github.com/planrun/planrun/backends/connect" // the backend kinds the plan names
	"github.com/planrun/planrun/plan"
)

// A cell's recorded settings are the plan's resolved values by attribute name: set
// ones only, header names without their values.
func TestCellSettings(t *testing.T) {
	cells := loadCells(t, `
variable "url" { type = string }
variable "mt" {
  type    = number
  default = 64
}
backend "openai" "vllm" {
  url          = "${var.url}/v1"
  headers      = { "X-Team" = "bench" }
  extra_fields = { top_p = 0.9 }
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = var.mt
  concurrency   = [1, 4]
  requests      = 8
  temperature   = 0
  seed          = 7
  slo { ttft_s = 0.5 }
  fidelity_lag_ms = 2.5
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  workload = [workload.w]
  model_id = "tiny-id"
}
`)
	got := Of(cells[0])
	want := map[string]string{
		"model": "tiny", "model_id": "tiny-id", "tool": "openai.vllm", "workload": "w",
		"backend.url": "http://127.0.0.1:8000/v1", "backend.api": "chat", "backend.headers": "X-Team",
		"backend.extra_fields.top_p": "0.9",
		"prompt_tokens":              "16", "max_tokens": "64", "concurrency": "1,4", "requests": "8",
		"temperature": "0", "seed": "7", "stream": "true", "force_max_tokens": "true",
		"warmup_runs": "3", "repeat_runs": "5", "measure": "", "fidelity_tolerance_pct": "5", "fidelity_lag_ms": "2.5", "slo.ttft": "500ms",
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected setting %s=%s", k, v)
		}
	}
	for k, v := range want {
		if v != "" && got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !reflect.DeepEqual(got, Of(cells[0])) {
		t.Error("two readings of one cell differ")
	}
}

// loadCells loads a plan whose url variable is a local server's, and expands its cells.
func loadCells(t *testing.T, src string) []*plan.Cell {
	t.Helper()
	p, diags := plan.LoadFiles(t.TempDir(), map[string][]byte{"plan.hcl": []byte(src)},
		plan.LoadOptions{Vars: []string{"url=http://127.0.0.1:8000"}, Getenv: func(string) string { return "" }})
	if diags.HasErrors() {
		t.Fatalf("plan: %v", diags)
	}
	cells, diags := p.Cells()
	if diags.HasErrors() {
		t.Fatalf("cells: %v", diags)
	}
	return cells
}

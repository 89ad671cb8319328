package apply

import (
	"reflect"
	"testing"
)

// A cell's recorded settings are the plan's resolved values by attribute name: set
// ones only, header names without their values.
func TestCellSettings(t *testing.T) {
	_, cells := loadPlan(t, `
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
`, "http://127.0.0.1:8000")
	got := cellSettings(cells[0])
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
	if !reflect.DeepEqual(got, cellSettings(cells[0])) {
		t.Error("two readings of one cell differ")
	}
}

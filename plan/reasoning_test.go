package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// A reasoning control a backend kind does not send is a warning at the control's line,
// once per workload naming every backend that ignores it, and the cell lists it as ignored; the controls a kind
// sends are not warned about.
func TestReasoningControlWarnings(t *testing.T) {
	src := `backend "ollama" "local" {}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "sglang" {
  url = "http://127.0.0.1:30000/v1"
}
workload "reason" {
  reasoning_effort = "low"
  think            = true
}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local, backend.openai.vllm, backend.openai.sglang]
  workload = [workload.reason]
}
`
	path := filepath.Join(t.TempDir(), "plan.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags := Load(path, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cells, diags := p.Cells()
	var warnings []*hcl.Diagnostic
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning && d.Summary == "Reasoning control not sent" {
			warnings = append(warnings, d)
		}
	}
	if len(warnings) != 1 || warnings[0].Subject.Start.Line != 10 || !strings.Contains(warnings[0].Detail, "think") ||
		!strings.Contains(warnings[0].Detail, "backends openai.vllm and openai.sglang ignore it") {
		t.Fatalf("warnings: %v", warnings)
	}
	for _, c := range cells {
		got := strings.Join(c.IgnoredReasoning(), ",")
		want := ""
		if c.Backend.Kind == "openai" {
			want = "think"
		}
		if got != want {
			t.Errorf("%s: ignored %q, want %q", c.ID, got, want)
		}
	}
	if w := p.Workloads[0].Reasoning; w.Effort != "low" || w.Think == nil || !*w.Think {
		t.Errorf("decoded %+v", w)
	}
}

package plan

import (
	"reflect"
	"testing"

	"github.com/planrun/planrun/ledger"
)

// TestDecisionDecode reads a decision's objective and constraints from their syntax: a
// limit written first is the same constraint turned round, and a limit from a variable
// is its value.
func TestDecisionDecode(t *testing.T) {
	src := `
variable "gb" { default = 8 }
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}
decision "fast" {
  objective   = maximize(result.output_tok_s)
  constraints = [result.memory_gb <= var.gb, 95 < result.slo_attainment_pct, result.ttft_p99_s < 0.5]
  cells       = ["m/a/*"]
}
decision "cheap" {
  objective = minimize(result.memory_gb)
}
`
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(p.Decisions) != 2 {
		t.Fatalf("%d decisions, want 2", len(p.Decisions))
	}
	want := ledger.DecisionSpec{Name: "fast", Objective: ledger.DecisionObjective{Field: "output_tok_s", Maximize: true},
		Constraints: []ledger.DecisionConstraint{{Field: "memory_gb", Op: "<=", Limit: 8},
			{Field: "slo_attainment_pct", Op: ">", Limit: 95}, {Field: "ttft_p99_s", Op: "<", Limit: 0.5}},
		Cells: []string{"m/a/*"}}
	if !reflect.DeepEqual(p.Decisions[0].DecisionSpec, want) {
		t.Errorf("got %+v\nwant %+v", p.Decisions[0].DecisionSpec, want)
	}
	if got := p.Decisions[1].Objective; got.Maximize || got.Field != "memory_gb" {
		t.Errorf("cheap: %+v", got)
	}
	if !p.Decisions[0].Applies("m/a/x/ollama.local/-/w") || p.Decisions[0].Applies("m/b/x/ollama.local/-/w") || !p.Decisions[1].Applies("anything") {
		t.Error("Applies does not follow the cells globs")
	}
}

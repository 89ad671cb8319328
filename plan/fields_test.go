package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/zclconf/go-cty/cty"
)

// TestResultFieldsValidate walks report's tables: validation accepts every result field
// with its type in a condition, and every reference metric in a reference block, so a
// name added to the table without the plan side (or the reverse) fails here.
func TestResultFieldsValidate(t *testing.T) {
	var src strings.Builder
	src.WriteString("backend \"ollama\" \"local\" {}\nworkload \"w\" {}\n")
	for _, f := range ledger.ResultFields {
		cond := fmt.Sprintf("result.%s != \"\"", f.Name)
		if f.Type == cty.Number {
			cond = fmt.Sprintf("result.%s >= 0", f.Name)
		}
		fmt.Fprintf(&src, "expect %q { condition = %s }\n", f.Name, cond)
	}
	src.WriteString("reference \"r\" {\n  match = { model = \"m\" }\n")
	for _, m := range ledger.ReferenceMetrics {
		fmt.Fprintf(&src, "  %s = [1, 2]\n", m.Name)
	}
	src.WriteString("}\n")
	p, diags := LoadFiles(t.TempDir(), map[string][]byte{"fields.hcl": []byte(src.String())}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatalf("%s\n%s", renderDiags(p, diags), src.String())
	}
	if len(p.Expects) != len(ledger.ResultFields) || len(p.References[0].Ranges) != len(ledger.ReferenceMetrics) {
		t.Errorf("%d expects for %d fields, %d ranges for %d metrics", len(p.Expects), len(ledger.ResultFields), len(p.References[0].Ranges), len(ledger.ReferenceMetrics))
	}
	// A name outside the table is refused.
	_, diags = LoadFiles(t.TempDir(), map[string][]byte{"x.hcl": []byte("expect \"x\" { condition = result.no_such_field > 0 }\n")}, LoadOptions{Getenv: noEnv})
	if !diags.HasErrors() || diags[0].Summary != "Unknown result value" {
		t.Errorf("result.no_such_field: %v", diags)
	}
}

package plan

import (
	"fmt"
	"path/filepath"
	"testing"
)

// Every kind of report.Outputs may be declared: a block without path writes the kind's
// default path, and the reports take a language and percentiles.
func TestOutputKinds(t *testing.T) {
	src := `
output "csv" {}
output "jsonl" {}
output "markdown" { language = "zh" }
output "html" { percentiles = [50, 99] }
output "summary" { path = "out/s.json" }
`
	dir := t.TempDir()
	p, diags := LoadFiles(dir, map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []struct {
		kind, path, language, percentiles string
	}{
		{"csv", "results/results.csv", "en", "[50 90 95 99]"},
		{"jsonl", "results/raw.jsonl", "en", "[50 90 95 99]"},
		{"markdown", "results/results.md", "zh", "[50 90 95 99]"},
		{"html", "results/report.html", "en", "[50 99]"},
		{"summary", "out/s.json", "en", "[50 90 95 99]"},
	}
	if len(p.Outputs) != len(want) {
		t.Fatalf("%d outputs, want %d", len(p.Outputs), len(want))
	}
	for i, w := range want {
		o := p.Outputs[i]
		got := fmt.Sprintf("%s %s %s %v", o.Kind, o.Path, o.Language, o.Percentiles)
		if exp := fmt.Sprintf("%s %s %s %s", w.kind, filepath.Join(p.Dir, w.path), w.language, w.percentiles); got != exp {
			t.Errorf("output %d = %s, want %s", i, got, exp)
		}
	}
}

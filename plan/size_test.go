package plan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestLargeMatrixNote: a matrix of 10,000 cells or more gets one warning with its size
// and rows, and still loads; a smaller one gets none.
func TestLargeMatrixNote(t *testing.T) {
	for _, tc := range []struct {
		models int
		want   string
	}{{100, "10000 cells before excludes, 20000 result rows"}, {99, ""}} {
		src := `
backend "ollama" "local" {}
workload "w" { concurrency = [1, 4] }
matrix "m" {
  model        = [for i in range(` + itoa(tc.models) + `) : "m${i}"]
  quantization = [for i in range(100) : "q${i}"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
}
`
		p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
		if diags.HasErrors() || p == nil {
			t.Fatalf("errors: %s", renderDiags(p, diags))
		}
		var notes []string
		for _, d := range diags {
			if d.Severity == hcl.DiagWarning && d.Summary == "Large matrix" {
				notes = append(notes, d.Detail)
			}
		}
		switch {
		case tc.want == "" && len(notes) > 0:
			t.Errorf("%d models: unexpected note %q", tc.models, notes)
		case tc.want != "" && (len(notes) != 1 || !strings.Contains(notes[0], tc.want)):
			t.Errorf("%d models: notes %q, want one saying %q", tc.models, notes, tc.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

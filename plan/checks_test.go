package plan

import (
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestPinWarnings: an Ollama backend's own num_thread against its pinned cores is a
// warning (the judgement the plan alone can make: the threads would share the cores),
// once per backend, and a num_thread equal to the cores, or on an unpinned cell, is none.
func TestPinWarnings(t *testing.T) {
	src := `
server "o" {
  command = ["ollama", "serve"]
}
backend "ollama" "eight" {
  server       = server.o
  extra_fields = { options = { num_thread = 8 } }
}
backend "ollama" "two" {
  server       = server.o
  extra_fields = { options = { num_thread = 2, num_ctx = 512 } }
}
hardware "one" { cpus = "0" }
hardware "two" { cpus = "0-1" }
hardware "free" {}
workload "w" { requests = 8 } # enough to bound a p50: no other warning
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.ollama.eight, backend.ollama.two]
  hardware = [hardware.one, hardware.two, hardware.free]
  workload = [workload.w]
}
`
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", renderDiags(p, diags))
	}
	_, more := p.Cells()
	var got []string
	for _, d := range append(diags, more...) {
		if d.Severity == hcl.DiagWarning {
			got = append(got, d.Subject.String())
		}
	}
	slices.Sort(got)
	// eight on one core and on two; two on one core: one warning per backend, at its
	// extra_fields.
	want := []string{"p.hcl:7,18-50", "p.hcl:11,18-65"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("warnings at %q, want %q:\n%s", got, want, renderDiags(p, append(diags, more...)))
	}
}

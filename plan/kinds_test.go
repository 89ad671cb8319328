package plan

import (
	"os/exec"
	"strings"
	"testing"

	// The plans under test name the adapters' kinds, which connect registers, and the
	// output kinds, which report registers; plan itself compiles neither.
	_ "github.com/planrun/planrun/backends/connect"
	_ "github.com/planrun/planrun/ledger/runreport"
)

// plan is the HCL decoder: it compiles no renderer (gonum/plot, package report) and no
// adapter; it reads the kinds from backends' registry and the result fields from ledger.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "gonum.org/v1/plot") || strings.HasPrefix(dep, "github.com/planrun/planrun/backends/") ||
			dep == "github.com/planrun/planrun/ledger/runreport" {
			t.Errorf("plan depends on %s", dep)
		}
	}
}

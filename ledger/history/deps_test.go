package history

import (
	"os/exec"
	"strings"
	"testing"
)

// history, site and index read and judge runs: they compile no chart library (gonum/plot;
// gonum's statistics, which the intervals use, are no chart)
// and no renderer (package report); the verdicts come from package compare.
func TestDependencies(t *testing.T) {
	for _, pkg := range []string{".", "../site", "../index"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "gonum.org/v1/plot") || dep == "github.com/planrun/planrun/ledger/runreport" {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}

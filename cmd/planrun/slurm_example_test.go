package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/testkit/slurmtest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/ledger"
)

// examples/slurm.hcl as docs/placements.md runs it, after `make quickstart` and
// `scripts/slurm-cluster.sh start`. The quickstart's outputs, as toolsWritten reads them
// from its script (bin/planrun, bin/ollama, and the model directory, written as its
// `go run ./tools/tinymodel -large` writes it), are laid out in a directory of the test's
// own that the plan's tools variable names, so the clone's .tools is left alone; the
// example is a copy, so its results land beside it. Both cells, a batch job each, measure
// both levels.
func TestSlurmExampleAfterQuickstart(t *testing.T) {
	slurmtest.Require(t)
	ollama := ollamatest.Require(t)
	bin := planrunBinary(t)
	tools := t.TempDir()
	links := map[string]string{"bin/planrun": bin, "bin/ollama": ollama}
	model := ""
	for _, w := range toolsWritten(t, "scripts/quickstart.sh") {
		if _, ok := links[w]; !ok {
			model = w
		}
	}
	if err := os.MkdirAll(filepath.Join(tools, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tinymodel.WriteDir(filepath.Join(tools, model), tinymodel.LargeConfig()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS("../../examples")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkNothingLeft(t, tools) })
	out, err := exec.Command(bin, "apply", "-gpu=false", "-var", "tools="+tools, filepath.Join(dir, "examples", "slurm.hcl")).CombinedOutput()
	if err != nil {
		t.Fatalf("apply examples/slurm.hcl: %v\n%s", err, out)
	}
	rows, err := ledger.ReadLedger(filepath.Join(dir, "results", "slurm", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4 (2 cells × 2 levels):\n%s", len(rows), out)
	}
	for _, r := range rows {
		if r.Status != ledger.StatusOK || r.Batch.Scheduler != "slurm" || r.Batch.Job == "" || r.Batch.State != "COMPLETED" {
			t.Errorf("row %s c=%d: status %s, job %q state %q (%s)", r.CellID, r.Concurrency, r.Status, r.Batch.Job, r.Batch.State, r.Notes)
		}
	}
	if !strings.Contains(string(out), "Apply complete!") {
		t.Errorf("no summary:\n%s", out)
	}
}

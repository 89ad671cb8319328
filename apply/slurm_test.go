package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/slurmtest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/telemetry/gpu"
)

// A job that runs but never writes a row is cancelled after RowsTimeout, and its levels
// fail naming the job's log; a job that cannot write the run directory fails naming it.
func TestSlurmJobWithoutRows(t *testing.T) {
	slurmtest.Require(t)
	// The "planrun" the node runs only sleeps: the job runs and writes nothing.
	fake := filepath.Join(t.TempDir(), "planrun")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
hardware "small" {
  slurm {
    partition    = "small"
    planrun_path = "` + fake + `"
  }
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  hardware = [hardware.small]
  workload = [workload.w]
}
`
	p, cells := loadPlan(t, src, "http://127.0.0.1:9")
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(),
		Jobs: JobOptions{Poll: 200 * time.Millisecond, RowsTimeout: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want a failed row per level", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusFailed || !strings.Contains(r.Notes, "without writing a row") || !strings.Contains(r.Notes, "slurm-"+r.Batch.Job+".out") || r.Batch.State != "CANCELLED" {
			t.Errorf("c=%d: %s %s %q", r.Concurrency, r.Status, r.Batch.State, r.Notes)
		}
	}
	if _, failed, _, _ := res.Counts(); failed != 1 {
		t.Errorf("cells: %+v", res.Cells)
	}
}

// Without sbatch on PATH, apply fails before anything is sent or written, naming the
// hardware block.
func TestSlurmWithoutSbatch(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	src := `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
hardware "large" {
  slurm { partition = "large" }
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1]
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  hardware = [hardware.large]
  workload = [workload.w]
}
`
	p, cells := loadPlan(t, src, "http://127.0.0.1:9")
	results := t.TempDir()
	_, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), ResultsDir: results})
	if err == nil || !strings.Contains(err.Error(), `hardware "large"`) || !strings.Contains(err.Error(), "sbatch") {
		t.Fatalf("err %v, want one naming the hardware block and sbatch", err)
	}
	if entries, _ := os.ReadDir(results); len(entries) != 0 {
		t.Errorf("a run directory was created: %v", entries)
	}
}

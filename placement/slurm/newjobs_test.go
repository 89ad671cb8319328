package slurm_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	_ "github.com/planrun/planrun/backends/connect" // registers the kinds the plan names
	"github.com/planrun/planrun/placement/slurm"
	"github.com/planrun/planrun/plan"
)

// Cells go into jobs in plan order: one per hardware block, one per cell for per_cell;
// cells placed locally or on a host are not Slurm's.
func TestNewJobs(t *testing.T) {
	p, diags := plan.Load("../../plan/testdata/valid-files/placement.hcl", plan.LoadOptions{Getenv: func(string) string { return "" }, Placements: []plan.PlacementKind{slurm.Kind.Block}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cells, _ := p.Cells()
	// Two more a100 cells through a second matrix would need another file; duplicate
	// the one we have to see grouping.
	cells = append(cells, cells...)
	jobs, err := slurm.NewJobs("../../plan/testdata/valid-files/placement.hcl", slurm.Cells(cells), []string{"partition=large"}, nil, "/runs/r1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name+":"+strings.Join(j.CellIDs, ","))
	}
	want := []string{
		"h200-1:m/qwen/-/openai.vllm/h200/w",
		"a100:m/qwen/-/openai.vllm/a100/w,m/qwen/-/openai.vllm/a100/w",
		"h200-2:m/qwen/-/openai.vllm/h200/w",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs %q, want %q", got, want)
	}
	self, _ := os.Executable()
	if jobs[0].Planrun != self || jobs[1].Planrun != "/shared/bin/planrun" {
		t.Errorf("planrun paths %q, %q", jobs[0].Planrun, jobs[1].Planrun)
	}
	if jobs[0].Dir != "/runs/r1/slurm/h200-1" || jobs[0].PlanName != "placement" || !strings.HasPrefix(jobs[0].PlanPath, "/") {
		t.Errorf("job 0 = %+v", jobs[0])
	}
}

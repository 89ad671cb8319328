package slurm

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	_ "github.com/planrun/planrun/backends/connect" // registers the kinds the plan names
	"github.com/planrun/planrun/plan"
)

func testJob() JobSpec {
	return JobSpec{
		Name: "h200", Hardware: "h200", PlanName: "bench", PlanPath: "/plans/bench.hcl",
		Settings: plan.Slurm{Partition: "gpu", GPUs: "1", Account: "lab", Time: "1:00:00", SbatchArgs: []string{"--mem=64G"}},
		CellIDs:  []string{"m/qwen/q4/ollama.local/h200/short", "m/qwen/fp8/openai.vllm/h200/short"},
		Vars:     []string{"url=http://x:1/v1", "note=it's"}, VarFiles: []string{"/plans/lab.vars"},
		Dir: "/shared/runs/r1/slurm/h200", Planrun: "/shared/bin/planrun",
	}
}

// The script states every setting as an #SBATCH line, keeps the environment
// (--export=ALL), writes the marker, and runs apply with the coordinator's plan, cells and
// variable values, quoted for bash.
func TestScript(t *testing.T) {
	got := Script(testJob())
	want := []string{
		"#SBATCH --job-name=planrun-bench-h200\n",
		"#SBATCH --output=/shared/runs/r1/slurm/h200/slurm-%j.out\n",
		"#SBATCH --partition=gpu\n#SBATCH --gpus=1\n#SBATCH --account=lab\n#SBATCH --time=1:00:00\n#SBATCH --export=ALL\n#SBATCH --mem=64G\n",
		"> /shared/runs/r1/slurm/h200/node-ready; then\n",
		"exec /shared/bin/planrun apply -quiet -run-dir /shared/runs/r1/slurm/h200" +
			" -only m/qwen/q4/ollama.local/h200/short -only m/qwen/fp8/openai.vllm/h200/short" +
			" -var-file /plans/lab.vars -var url=http://x:1/v1 -var 'note=it'\\''s' /plans/bench.hcl\n",
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("script lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "--gres") || strings.Contains(got, "--qos") {
		t.Errorf("script states options the block leaves unset:\n%s", got)
	}
	// An --export of the user's own replaces ours.
	j := testJob()
	j.Settings.SbatchArgs = []string{"--export=NONE,HOME"}
	if got := Script(j); strings.Contains(got, "--export=ALL") || !strings.Contains(got, "#SBATCH --export=NONE,HOME\n") {
		t.Errorf("user's --export not kept alone:\n%s", got)
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]State{
		"PENDING": Pending, "RUNNING": Running, "COMPLETED": Completed, "FAILED": Failed, "TIMEOUT": Timeout,
		"CANCELLED by 0": Cancelled, "CANCELLED+": Cancelled, "NODE_FAIL": NodeFail, "OUT_OF_MEMORY": OutOfMemory,
		"OOM": OutOfMemory, "CONFIGURING": Pending, "SUSPENDED": Unknown,
	} {
		if got := ParseState(in); got != want {
			t.Errorf("ParseState(%q) = %s, want %s", in, got, want)
		}
	}
	for _, s := range []State{Pending, Running, Completing, Unknown} {
		if s.Terminal() {
			t.Errorf("%s is terminal", s)
		}
	}
	for _, s := range []State{Completed, Failed, Timeout, Cancelled, NodeFail, OutOfMemory} {
		if !s.Terminal() {
			t.Errorf("%s is not terminal", s)
		}
	}
}

func TestStatusLine(t *testing.T) {
	pending := parseScontrol("12", "JobId=12 JobName=planrun-b-small JobState=PENDING Reason=Resources Dependency=(null) NodeList=(null) ExitCode=0:0")
	if got := pending.Line("small"); got != "job 12 small: PENDING (Resources)" {
		t.Error(got)
	}
	running := parseScontrol("12", "JobId=12 JobState=RUNNING Reason=None NodeList=node7 ExitCode=0:0")
	if got := running.Line("small"); got != "job 12 small: RUNNING on node7" {
		t.Error(got)
	}
	failed := parseScontrol("12", "JobId=12 JobState=FAILED Reason=NonZeroExitCode NodeList=node7 ExitCode=3:0")
	if failed.State != Failed || failed.ExitCode != "3:0" || failed.Line("small") != "job 12 small: FAILED on node7" {
		t.Errorf("%+v %q", failed, failed.Line("small"))
	}
}

// Cells go into jobs in plan order: one per hardware block, one per cell for per_cell;
// cells placed locally or on a host are not Slurm's.
func TestNewJobs(t *testing.T) {
	p, diags := plan.Load("../plan/testdata/valid-files/placement.hcl", plan.LoadOptions{Getenv: func(string) string { return "" }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cells, _ := p.Cells()
	// Two more a100 cells through a second matrix would need another file; duplicate
	// the one we have to see grouping.
	cells = append(cells, cells...)
	jobs, err := NewJobs("../plan/testdata/valid-files/placement.hcl", cells, []string{"partition=large"}, nil, "/runs/r1")
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

// Without sbatch nothing is written or sent, and the error names the hardware block.
func TestSubmitWithoutSbatch(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	j := testJob()
	j.Dir = t.TempDir() + "/job"
	_, err := Submit(context.Background(), j)
	if !errors.Is(err, ErrNoSbatch) || !strings.Contains(err.Error(), `hardware "h200"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(j.Dir); !os.IsNotExist(err) {
		t.Errorf("job directory written before failing: %v", err)
	}
}

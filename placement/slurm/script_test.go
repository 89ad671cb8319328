package slurm

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/planrun/planrun/placement"
)

func testJob() JobSpec {
	return JobSpec{
		Name: "h200", Hardware: "h200", PlanName: "bench", PlanPath: "/plans/bench.hcl",
		Settings: Settings{Partition: "gpu", GPUs: "1", Account: "lab", Time: "1:00:00", SbatchArgs: []string{"--mem=64G"}},
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
	if strings.Contains(got, "--ntasks") {
		t.Errorf("a job without load agents asks for tasks:\n%s", got)
	}
	// A cell of load agents asks for one task each: the node starts them with srun.
	j := testJob()
	j.Tasks = 4
	if got := Script(j); !strings.Contains(got, "#SBATCH --ntasks=4\n") {
		t.Errorf("a job of 4 agents does not ask for 4 tasks:\n%s", got)
	}
	// An --export of the user's own replaces ours.
	j = testJob()
	j.Settings.SbatchArgs = []string{"--export=NONE,HOME"}
	if got := Script(j); strings.Contains(got, "--export=ALL") || !strings.Contains(got, "#SBATCH --export=NONE,HOME\n") {
		t.Errorf("user's --export not kept alone:\n%s", got)
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]state{
		"PENDING": statePending, "RUNNING": stateRunning, "COMPLETED": stateCompleted, "FAILED": stateFailed, "TIMEOUT": stateTimeout,
		"CANCELLED by 0": stateCancelled, "CANCELLED+": stateCancelled, "NODE_FAIL": stateNodeFail, "OUT_OF_MEMORY": stateOutOfMemory,
		"OOM": stateOutOfMemory, "CONFIGURING": statePending, "SUSPENDED": stateUnknown,
	} {
		if got := parseState(in); got != want {
			t.Errorf("ParseState(%q) = %s, want %s", in, got, want)
		}
	}
	for _, s := range []state{statePending, stateRunning, stateCompleting, stateUnknown} {
		if s.Terminal() {
			t.Errorf("%s is terminal", s)
		}
	}
	for _, s := range []state{stateCompleted, stateFailed, stateTimeout, stateCancelled, stateNodeFail, stateOutOfMemory} {
		if !s.Terminal() {
			t.Errorf("%s is not terminal", s)
		}
	}
}

func TestStatusLine(t *testing.T) {
	pending := parseScontrol("12", "JobId=12 JobName=planrun-b-small JobState=PENDING Reason=Resources Dependency=(null) NodeList=(null) ExitCode=0:0")
	if got := pending.Batch().Line("small"); got != "job 12 small: PENDING (Resources)" {
		t.Error(got)
	}
	running := parseScontrol("12", "JobId=12 JobState=RUNNING Reason=None NodeList=node7 ExitCode=0:0")
	if got := running.Batch().Line("small"); got != "job 12 small: RUNNING on node7" {
		t.Error(got)
	}
	failed := parseScontrol("12", "JobId=12 JobState=FAILED Reason=NonZeroExitCode NodeList=node7 ExitCode=3:0")
	if failed.State != stateFailed || failed.ExitCode != "3:0" || failed.Batch().Line("small") != "job 12 small: FAILED on node7" {
		t.Errorf("%+v %q", failed, failed.Batch().Line("small"))
	}
}

// Without sbatch nothing is written or sent, and the error names the hardware block.
func TestSubmitWithoutSbatch(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	j := testJob()
	j.Dir = t.TempDir() + "/job"
	_, err := submit(context.Background(), j)
	if !errors.Is(err, errNoSbatch) || !strings.Contains(err.Error(), `hardware "h200"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(j.Dir); !os.IsNotExist(err) {
		t.Errorf("job directory written before failing: %v", err)
	}
}

// The coordinator's phases: a completing job still runs (its rows clock runs on), only
// COMPLETED completes, every other end fails, and a state planrun does not act on is
// unknown (its rows clock waits, as for a pending job).
func TestStatusBatch(t *testing.T) {
	for in, want := range map[string]placement.Phase{
		"PENDING": placement.Pending, "CONFIGURING": placement.Pending, "RUNNING": placement.Running, "COMPLETING": placement.Running,
		"COMPLETED": placement.Completed, "FAILED": placement.Failed, "CANCELLED by 0": placement.Failed, "NODE_FAIL": placement.Failed,
		"TIMEOUT": placement.Failed, "OOM": placement.Failed, "SUSPENDED": placement.Unknown,
	} {
		st := status{ID: "7", State: parseState(in), Node: "n1", ExitCode: "1:0"}.Batch()
		if st.Phase != want || st.State != parseState(in).String() || st.ID != "7" || st.Node != "n1" || st.ExitCode != "1:0" {
			t.Errorf("%s: %+v, want phase %d", in, st, want)
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/testkit/slurmtest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/ledger"
)

// These tests run the planrun binary against the real single-node test cluster
// (scripts/slurm-cluster.sh): the batch jobs run that same binary on the node, which
// starts the plan's servers there.

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// planrunBinary builds this command once per test process, for the nodes to run.
func planrunBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "planrun-slurm-bin")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "planrun")
		out, err := exec.Command("go", "build", "-o", buildPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// slurmHardware is a hardware block on a partition with a mock server of its own port;
// mockArgs go to its command line.
func slurmHardware(name, partition string, port int, tpot string, mockArgs ...string) string {
	extra := ""
	for _, a := range mockArgs {
		extra += fmt.Sprintf(", %q", a)
	}
	return fmt.Sprintf(`
hardware %[1]q {
  gpu = "mock"
  slurm {
    partition    = %[2]q
    time         = "10:00"
    planrun_path = var.planrun
  }
}
server "mock_%[1]s" {
  command = [var.planrun, "mock-server", "-addr", "127.0.0.1:%[3]d", "-ttft", "20ms", "-tpot", %[4]q%[5]s]
  dir     = var.dir
  ready {
    url     = "http://127.0.0.1:%[3]d/health"
    timeout = "30s"
  }
}
backend "openai" "mock_%[1]s" {
  url    = "http://127.0.0.1:%[3]d/v1"
  server = server.mock_%[1]s
}
matrix "m_%[1]s" {
  model    = ["mock"]
  tool     = [backend.openai.mock_%[1]s]
  hardware = [hardware.%[1]s]
  workload = [workload.quick]
}
`, name, partition, port, tpot, extra)
}

const slurmPlanHead = `
variable "planrun" { type = string }
variable "dir" { type = string }
variable "ollama" {
  type    = string
  default = "ollama"
}
workload "quick" {
  prompt_tokens = 16
  max_tokens    = 16
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 2
  requests      = 4
}
output "csv" { path = "results/results.csv" }
`

const slurmOllama = `
variable "model" { type = string }
hardware "large" {
  gpu = "CPU (tiny model)"
  slurm {
    partition    = "large"
    time         = "10:00"
    planrun_path = var.planrun
  }
}
server "ollama" {
  command = [var.ollama, "serve"]
  dir     = var.dir
  env = {
    OLLAMA_HOST   = "127.0.0.1:11581"
    OLLAMA_MODELS = "${var.dir}/models"
    HOME          = var.dir
  }
  ready {
    url     = "http://127.0.0.1:11581/api/version"
    timeout = "60s"
  }
  setup = [[var.ollama, "create", "tiny", "-f", "${var.model}/Modelfile"]]
}
backend "ollama" "tiny" {
  url    = "http://127.0.0.1:11581"
  server = server.ollama
}
matrix "tiny" {
  model    = ["tiny"]
  tool     = [backend.ollama.tiny]
  hardware = [hardware.large]
  workload = [workload.quick]
}
`

// slurmApply starts planrun apply on the plan (written into a fresh directory, which
// is also the servers' working directory) and returns the command and the directory.
func slurmApply(t *testing.T, src string, vars ...string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	bin := planrunBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "-gpu=false", "-var", "planrun=" + bin, "-var", "dir=" + dir}
	for _, v := range vars {
		args = append(args, "-var", v)
	}
	cmd := exec.Command(bin, append(args, path)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		checkNothingLeft(t, dir)
	})
	return cmd, &out, dir
}

// exitCode waits for the command and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// checkNothingLeft fails when squeue still lists one of planrun's jobs, or a process
// (a server the jobs started) still runs in dir.
func checkNothingLeft(t *testing.T, dir string) {
	t.Helper()
	// Only this test's jobs: their batch scripts lie under dir (another test binary may
	// share the cluster).
	out, _ := exec.Command("squeue", "-h", "-o", "%i %j %T %o").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, dir) {
			t.Errorf("job left in squeue: %s", line)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, dir) {
			cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			t.Errorf("process left running in %s: %s", dir, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
}

func ledgerRows(t *testing.T, dir string) []ledger.Row {
	t.Helper()
	rows, err := ledger.ReadLedger(filepath.Join(dir, "results", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// waitJobRunning waits until the named job of the plan runs and has written a row.
func waitJobRunning(t *testing.T, name string, out *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		b, _ := exec.Command("squeue", "-h", "-n", "planrun-plan-"+name, "-o", "%i %T").Output()
		if f := strings.Fields(string(b)); len(f) == 2 && f[1] == "RUNNING" && strings.Contains(out.String(), name+": RUNNING on") {
			return f[0]
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("job %s never ran; output:\n%s", name, out)
	return ""
}

func TestSlurmApplyTwoPartitions(t *testing.T) {
	slurmtest.Require(t)
	ollama := ollamatest.Require(t)
	model := t.TempDir()
	if _, err := tinymodel.WriteDir(model, tinymodel.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	src := slurmPlanHead + slurmHardware("small", "small", 18611, "2ms") + slurmOllama
	cmd, out, dir := slurmApply(t, src, "ollama="+ollama, "model="+model)
	if code := exitCode(t, cmd); code != exitOK {
		t.Fatalf("apply exit %d:\n%s", code, out)
	}
	host, _ := exec.Command("hostname", "-s").Output()
	rows := ledgerRows(t, dir)
	if len(rows) != 4 {
		t.Fatalf("%d rows in the ledger, want 4 (2 cells × 2 levels):\n%s", len(rows), out)
	}
	jobs := map[string]string{}
	for _, r := range rows {
		if r.Status != ledger.StatusOK || r.Batch.Job == "" || r.Batch.Node != strings.TrimSpace(string(host)) || r.Batch.State != "COMPLETED" {
			t.Errorf("row %s c=%d: status %s, job %q node %q state %q", r.CellID, r.Concurrency, r.Status, r.Batch.Job, r.Batch.Node, r.Batch.State)
		}
		jobs[r.Hardware] = r.Batch.Job
	}
	if len(jobs) != 2 || jobs["small"] == jobs["large"] {
		t.Errorf("want one job per hardware block, got %v", jobs)
	}
	reports, _ := filepath.Glob(filepath.Join(dir, "results", "*", "report.md"))
	if len(reports) != 1 {
		t.Fatalf("report.md: %v", reports)
	}
	// Merged rows and raw samples belong to the coordinator's run, whichever job measured them.
	m, err := ledger.ReadManifest(filepath.Join(filepath.Dir(reports[0]), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.RunID == "" || r.RunID != m.RunID {
			t.Errorf("row %s c=%d: run id %q, want the run's %q", r.CellID, r.Concurrency, r.RunID, m.RunID)
		}
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(reports[0]), "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := ledger.ReadRequests(bytes.NewReader(raw))
	if err != nil || len(samples) == 0 {
		t.Fatalf("%d merged raw samples: %v", len(samples), err)
	}
	for _, s := range samples {
		if s.RunID != m.RunID {
			t.Fatalf("raw sample of %s: run id %q, want the run's %q", s.CellID, s.RunID, m.RunID)
		}
	}
	md, _ := os.ReadFile(reports[0])
	for _, id := range []string{"m_small/mock/-/openai.mock_small/small/quick", "tiny/tiny/-/ollama.tiny/large/quick"} {
		if !strings.Contains(string(md), id) {
			t.Errorf("report has no row of %s", id)
		}
	}
	for _, want := range []string{"job " + jobs["small"] + " small: RUNNING on", "rows 2 of 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress has no %q:\n%s", want, out)
		}
	}
}

// A job cancelled mid-run fails the levels it did not finish, naming the state and its
// log; a missing partition fails only its hardware's cells; the other job completes.
func TestSlurmCancelledJobAndMissingPartition(t *testing.T) {
	slurmtest.Require(t)
	src := slurmPlanHead + slurmHardware("slow", "small", 18621, "400ms") +
		slurmHardware("fast", "large", 18622, "2ms") + slurmHardware("nowhere", "no-such-partition", 18623, "2ms")
	cmd, out, dir := slurmApply(t, src)
	id := waitJobRunning(t, "slow", out)
	if b, err := exec.Command("scancel", id).CombinedOutput(); err != nil {
		t.Fatalf("scancel: %v %s", err, b)
	}
	if code := exitCode(t, cmd); code != exitCellsFailed {
		t.Fatalf("apply exit %d, want %d:\n%s", code, exitCellsFailed, out)
	}
	byHW := map[string][]ledger.Row{}
	for _, r := range ledgerRows(t, dir) {
		byHW[r.Hardware] = append(byHW[r.Hardware], r)
	}
	for _, r := range byHW["fast"] {
		if r.Status != ledger.StatusOK || r.Batch.State != "COMPLETED" {
			t.Errorf("fast c=%d: %s %s %s", r.Concurrency, r.Status, r.Batch.State, r.Notes)
		}
	}
	failed := 0
	for _, r := range byHW["slow"] {
		if r.Status == ledger.StatusFailed {
			failed++
			if !strings.Contains(r.Notes, "CANCELLED") || !strings.Contains(r.Notes, "slurm-"+id+".out") {
				t.Errorf("slow c=%d: notes %q name neither the state nor the log", r.Concurrency, r.Notes)
			}
		}
	}
	if len(byHW["fast"]) != 2 || failed == 0 || len(byHW["nowhere"]) != 2 {
		t.Fatalf("rows by hardware: fast %d, slow %d (%d failed), nowhere %d:\n%s", len(byHW["fast"]), len(byHW["slow"]), failed, len(byHW["nowhere"]), out)
	}
	for _, r := range byHW["nowhere"] {
		if r.Status != ledger.StatusFailed || !strings.Contains(r.Notes, "partition") {
			t.Errorf("nowhere c=%d: %s %q, want failed with sbatch's message", r.Concurrency, r.Status, r.Notes)
		}
	}
}

// The first interrupt cancels every job planrun submitted and waits for them: nothing
// stays in squeue, no server stays up, and what was measured is written.
func TestSlurmInterruptCancelsJobs(t *testing.T) {
	slurmtest.Require(t)
	src := slurmPlanHead + slurmHardware("slow", "small", 18631, "400ms") + slurmHardware("slower", "large", 18632, "400ms")
	cmd, out, dir := slurmApply(t, src)
	waitJobRunning(t, "slow", out)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("apply exit %d, want %d:\n%s", code, exitInterrupted, out)
	}
	checkNothingLeft(t, dir)
	if !strings.Contains(out.String(), "Apply interrupted.") {
		t.Errorf("no interrupted summary:\n%s", out)
	}
}

// -resume after an interrupt runs again only the levels no job finished, and keeps the
// rows of the first job.
func TestSlurmResumeSkipsCompleteLevels(t *testing.T) {
	slurmtest.Require(t)
	src := slurmPlanHead + slurmHardware("slow", "small", 18641, "100ms")
	cmd, out, dir := slurmApply(t, src)
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), "rows 1 of 2") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("apply exit %d, want %d:\n%s", code, exitInterrupted, out)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "results", "plan-2*"))
	if len(runs) != 1 {
		t.Fatalf("run directories: %v", runs)
	}
	bin := planrunBinary(t)
	again := exec.Command(bin, "apply", "-gpu=false", "-var", "planrun="+bin, "-var", "dir="+dir, "-resume", runs[0], filepath.Join(dir, "plan.hcl"))
	b, err := again.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	rows, err := ledger.ReadLedger(filepath.Join(runs[0], "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	okJob := map[int]string{}
	for _, r := range rows {
		if r.Status == ledger.StatusOK {
			if _, dup := okJob[r.Concurrency]; dup {
				t.Errorf("c=%d measured twice", r.Concurrency)
			}
			okJob[r.Concurrency] = r.Batch.Job
		}
	}
	if len(okJob) != 2 || okJob[1] == okJob[2] || okJob[1] == "" {
		t.Errorf("ok rows by level → job: %v; want c=1 from the first job, c=2 from the resumed one\nfirst:\n%s\nresume:\n%s", okJob, out, b)
	}
}

// A Slurm cell's rows carry the whole job's memory, as sstat read it on the node: the
// mock server holds 256 MiB from its start, so the job's MaxRSS is at least that, and at
// least the server tree's own peak read on the same row; above it is planrun's client
// and the mock's runtime, at most 200 MB. sstat sums the RSS of every process of the
// step, and RSS counts a process's resident pages of its binary: the client and the
// mock server are both planrun, so its binary counts twice. That is why the 200 MB
// failed (473 MiB at c=2) while planrun linked client-go's clientset (96 MB, 58.5 MB of it
// resident in each process); the build links only the two API groups it calls now.
// The source says whose figure it is and since when.
func TestSlurmJobMemory(t *testing.T) {
	slurmtest.Require(t)
	slurmtest.RequireAccounting(t)
	const hold = 256 << 20
	src := slurmPlanHead + slurmHardware("mem", "small", 18651, "2ms", "-hold-mb", "256")
	cmd, out, dir := slurmApply(t, src)
	if code := exitCode(t, cmd); code != exitOK {
		t.Fatalf("apply exit %d:\n%s", code, out)
	}
	rows := ledgerRows(t, dir)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 levels:\n%s", len(rows), out)
	}
	for _, r := range rows {
		t.Logf("c=%d: job %s: baseline %.4f GB, MaxRSS %.4f GB; server tree peak %.4f GB; %s",
			r.Concurrency, r.Batch.Job, r.MemJobBaselineGB, r.MemJobPeakGB, r.MemPeakGB, r.MemJobSource)
		peak := r.MemJobPeakGB * 1e9
		if over := peak - hold; math.IsNaN(peak) || over < 0 || over > 200e6 {
			t.Errorf("c=%d: job MaxRSS %.1f MiB, want at least the %d MiB the server holds and at most 200 MB more (planrun, the mock's runtime)",
				r.Concurrency, peak/(1<<20), hold>>20)
		}
		if r.MemJobPeakGB < r.MemPeakGB {
			t.Errorf("c=%d: the job's MaxRSS %.4f GB is below its server tree's peak %.4f GB", r.Concurrency, r.MemJobPeakGB, r.MemPeakGB)
		}
		want := "sstat MaxRSS of job step " + r.Batch.Job + ".batch: the whole job (planrun's client and the servers it started), peak since the job started at "
		if !strings.HasPrefix(r.MemJobSource, want) {
			t.Errorf("c=%d: mem_job_source %q, want it to begin %q", r.Concurrency, r.MemJobSource, want)
		}
	}
}

// A cell of two load agents on Slurm: its job asks for two tasks, the node's planrun
// starts its agents as the tasks of one srun step, and the row has the shape a local
// run's has (agents 2, its clock bound, its figures), merged into the coordinator's
// run; the manifest names each agent's node and its clock offset.
func TestSlurmAgentsAreTasksOfTheJob(t *testing.T) {
	slurmtest.Require(t)
	src := strings.Replace(slurmPlanHead, "  requests      = 4\n", "  requests      = 8\n  agents        = 2\n", 1) +
		slurmHardware("small", "small", 18631, "2ms")
	src = strings.Replace(src, "concurrency   = [1, 2]", "concurrency   = [2, 4]", 1)
	cmd, out, dir := slurmApply(t, src)
	if code := exitCode(t, cmd); code != exitOK {
		t.Fatalf("apply exit %d:\n%s", code, out)
	}
	host, _ := exec.Command("hostname", "-s").Output()
	node := strings.TrimSpace(string(host))
	rows := ledgerRows(t, dir)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(rows), out)
	}
	for _, r := range rows {
		t.Logf("c=%d: %s, %d requests, agents %d, clock bound %.3f ms, ttft p50 %.2f ms; %s", r.Concurrency, r.Status, r.Requests, r.Agents,
			r.ClockBoundMs, r.TTFT.P50*1e3, r.Notes)
		if r.Status != ledger.StatusOK || r.Requests != 16 || r.Agents != 2 || !(r.ClockBoundMs >= 0) || !(r.TTFT.P50 > 0) ||
			r.Batch.Node != node || r.Batch.State != "COMPLETED" {
			t.Errorf("row c=%d: status %s, %d requests, agents %d, clock bound %v, ttft %v, node %q, state %q", r.Concurrency, r.Status,
				r.Requests, r.Agents, r.ClockBoundMs, r.TTFT.P50, r.Batch.Node, r.Batch.State)
		}
	}
	manifests, _ := filepath.Glob(filepath.Join(dir, "results", "*", "manifest.json"))
	if len(manifests) != 1 {
		t.Fatalf("manifests: %v", manifests)
	}
	m, err := ledger.ReadManifest(manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Agents) != 2 {
		t.Fatalf("manifest agents %+v, want the job's two", m.Agents)
	}
	for _, a := range m.Agents {
		t.Logf("agent %d: %s on node %q, pid %d, offset %v ± %v", a.Index, a.Where, a.Node, a.PID, a.ClockStart.Offset, a.ClockStart.Bound)
		if a.Node != node || a.Where != fmt.Sprintf("srun task %d", a.Index) || a.ClockStart.RoundTrips == 0 ||
			a.ClockStart.Offset > a.ClockStart.Bound+time.Millisecond || -a.ClockStart.Offset > a.ClockStart.Bound+time.Millisecond {
			t.Errorf("agent %d: %+v", a.Index, a)
		}
	}
	raw, _ := filepath.Glob(filepath.Join(dir, "results", "*", "requests.jsonl"))
	b, _ := os.ReadFile(raw[0])
	recs, err := ledger.ReadRequests(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	byAgent := map[int]int{}
	for _, r := range recs {
		if r.Agent != nil && !r.Warmup {
			byAgent[*r.Agent]++
		}
	}
	if byAgent[0] == 0 || byAgent[1] == 0 || byAgent[0]+byAgent[1] != 32 {
		t.Errorf("measured records by agent %v, want both of the 32", byAgent)
	}
}

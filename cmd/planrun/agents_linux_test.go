package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/internal/testkit/sshtest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers"
)

// agentsCLIPlan is a cell of three load agents against a plan-managed mock server,
// with a level long enough to be interrupted in.
const agentsCLIPlan = `
server "mock" {
  command = [%[1]q, "mock-server", "-addr", "127.0.0.1:%[2]d", "-ttft", "5ms", "-tpot", "1ms"]
  dir     = %[3]q
  ready { url = "http://127.0.0.1:%[2]d/health" }
}
backend "openai" "mock" {
  url    = "http://127.0.0.1:%[2]d/v1"
  server = server.mock
}
workload "w" {
  agents        = 3
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [3, 6]
  request_rate  = [30]
  requests      = %[4]d
  warmup_runs   = 0
  repeat_runs   = 1
  fidelity_lag_ms = 1000
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
output "csv" { path = "%[3]s/results.csv" }
`

// agentsCLI writes the plan with requests a level and starts planrun apply on it, in
// its own directory, its output to a file.
func agentsCLI(t *testing.T, requests int) (*exec.Cmd, string, string) {
	t.Helper()
	bin := planrunBinary(t)
	dir := t.TempDir()
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agents.hcl")
	if err := os.WriteFile(path, fmt.Appendf(nil, agentsCLIPlan, bin, port, dir, requests), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "apply", "-gpu=false", path)
	cmd.Dir = dir
	outPath := filepath.Join(dir, "planrun.out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for _, pid := range proctest.Mentioning(dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return cmd, dir, outPath
}

// agentPIDs are the live processes of the run's `planrun agent`s.
func agentPIDs(dir string) []int {
	var pids []int
	for _, pid := range proctest.Mentioning(dir) {
		if strings.Contains(proctest.Describe(pid), " agent") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitAgents waits until n agents of the run are up and sending.
func waitAgents(t *testing.T, dir, outPath string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(agentPIDs(dir)) < n {
		if time.Now().After(deadline) {
			said, _ := os.ReadFile(outPath)
			t.Fatalf("%d agents of %d after 60s; planrun said:\n%s", len(agentPIDs(dir)), n, said)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // requests are flowing
}

// The planrun binary runs the cell's three agents as its own `planrun agent`
// processes; Ctrl-C (SIGINT to planrun alone: the agents are in process groups of
// their own, as a terminal's Ctrl-C would leave them) stops every agent, and apply
// exits interrupted with what was measured.
func TestApplyAgentsCtrlCStopsEveryAgent(t *testing.T) {
	cmd, dir, outPath := agentsCLI(t, 100000)
	waitAgents(t, dir, outPath, 3)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		said, _ := os.ReadFile(outPath)
		t.Fatalf("exit %d, want %d:\n%s", code, exitInterrupted, said)
	}
	if left := agentPIDs(dir); len(left) > 0 {
		t.Fatalf("agents left running after Ctrl-C: %v", left)
	}
	rows, err := ledger.ReadLedger(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Status != ledger.StatusInterrupted || rows[0].Requests == 0 || rows[0].Agents != 3 {
		t.Fatalf("rows %+v", rows)
	}
}

// planrun SIGKILLed mid-level runs none of its shutdown: its agents, which lose their
// lead (and on Linux get its death signal), must end anyway.
func TestKilledApplyLeavesNoAgent(t *testing.T) {
	cmd, dir, outPath := agentsCLI(t, 100000)
	waitAgents(t, dir, outPath, 3)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for left := agentPIDs(dir); len(left) > 0; left = agentPIDs(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("20s after planrun's SIGKILL, agents still running: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A short run completes: both levels' rows are ok, sent by three agents.
func TestApplyAgentsComplete(t *testing.T) {
	cmd, dir, outPath := agentsCLI(t, 60)
	if code := exitCode(t, cmd); code != exitOK {
		said, _ := os.ReadFile(outPath)
		t.Fatalf("exit %d:\n%s", code, said)
	}
	rows, err := ledger.ReadLedger(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.Status != ledger.StatusOK || r.Requests != 60 || r.Agents != 3 || r.Fidelity != ledger.FidelityOK {
			t.Errorf("c=%d: %s, %d requests, %d agents, fidelity %s: %s", r.Concurrency, r.Status, r.Requests, r.Agents, r.Fidelity, r.Notes)
		}
	}
	if left := agentPIDs(dir); len(left) > 0 {
		t.Errorf("agents left running: %v", left)
	}
}

// Agents on the hosts an agents block lists, one a host, reached through ssh: here two
// names of this machine (127.0.0.1 and localhost) behind a private sshd
// (internal/testkit/sshtest), each running the planrun binary's agent mode with the
// lead's address, index and token on its command line, and no API key.
func TestApplyAgentsOverSSH(t *testing.T) {
	ssh := sshtest.Start(t)
	bin := planrunBinary(t)
	dir := t.TempDir()
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(ssh))
	for i, a := range ssh {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	src := fmt.Sprintf(agentsCLIPlan, bin, port, dir, 40)
	src = strings.Replace(src, "agents        = 3", "agents        = 2", 1)
	src = strings.Replace(src, "concurrency   = [3, 6]", "concurrency   = [4]", 1)
	src += fmt.Sprintf(`
hardware "clients" {
  agents {
    hosts        = ["127.0.0.1", "localhost"]
    ssh          = [%s]
    planrun_path = %q
    coordinator  = "127.0.0.1"
  }
}
`, strings.Join(quoted, ", "), bin)
	src = strings.Replace(src, "  workload = [workload.w]\n}", "  workload = [workload.w]\n  hardware = [hardware.clients]\n}", 1)
	path := filepath.Join(dir, "ssh.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := exec.Command(bin, "apply", "-gpu=false", path).CombinedOutput()
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	t.Logf("apply took %v:\n%s", time.Since(start), out)
	rows, err := ledger.ReadLedger(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Status != ledger.StatusOK || rows[0].Requests != 40 || rows[0].Agents != 2 {
		t.Fatalf("rows %+v\n%s", rows, out)
	}
	manifests, _ := filepath.Glob(filepath.Join(dir, "*", "manifest.json"))
	if len(manifests) != 1 {
		t.Fatalf("manifests %v", manifests)
	}
	m, err := ledger.ReadManifest(manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"ssh 127.0.0.1", "ssh localhost"} {
		if len(m.Agents) != 2 || m.Agents[i].Where != want || m.Agents[i].PID == 0 {
			t.Fatalf("manifest agents %+v, want agent %d %s", m.Agents, i, want)
		}
	}
}

// Every pod of a Kubernetes Indexed Job of several agents runs one command line,
// `planrun agent -lead -- apply ...`: index 0 runs the command after --, the others are
// agents (here, one whose lead does not answer, which says so).
func TestAgentLeadRunsTheCommandAtIndexZero(t *testing.T) {
	run := func(index string, args ...string) (int, string, string) {
		vars := map[string]string{"PLANRUN_AGENT_COORDINATOR": "127.0.0.1:1", "PLANRUN_AGENT_COUNT": "2", "PLANRUN_AGENT_TOKEN": "t",
			"JOB_COMPLETION_INDEX": index}
		var out, errb strings.Builder
		env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
		return Main(context.Background(), env, args), out.String(), errb.String()
	}
	if code, out, errs := run("0", "agent", "-lead", "--", "version"); code != exitOK || !strings.HasPrefix(out, "planrun ") {
		t.Errorf("index 0: exit %d, stdout %q, stderr %q: want planrun version's", code, out, errs)
	}
	if code, out, errs := run("1", "agent", "-lead", "--", "version"); code != exitError || out != "" ||
		!strings.Contains(errs, "planrun agent 1: dialing the lead at 127.0.0.1:1") {
		t.Errorf("index 1: exit %d, stdout %q, stderr %q: want the agent, failing to dial", code, out, errs)
	}
	for _, args := range [][]string{{"agent", "-lead"}, {"agent", "--", "version"}, {"agent", "-lead", "version"}} {
		if code, _, errs := run("0", args...); code != exitUsage {
			t.Errorf("%q: exit %d (%s), want a usage error", args, code, errs)
		}
	}
}

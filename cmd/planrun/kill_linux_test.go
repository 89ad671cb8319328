package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/servers"
)

// killPlan is the quickstart's server block with a workload long enough to be killed in.
const killPlan = `
server "ollama" {
  command = [%[1]q, "serve"]
  dir     = %[2]q
  env = {
    OLLAMA_HOST   = "127.0.0.1:%[3]d"
    OLLAMA_MODELS = "%[2]s/models"
    HOME          = "%[2]s/home"
  }
  ready { url = "http://127.0.0.1:%[3]d/api/version" }
  setup = [[%[1]q, "create", "tiny", "-f", %[4]q]]
}
backend "ollama" "native" {
  url    = "http://127.0.0.1:%[3]d"
  server = server.ollama
}
workload "long" {
  prompt_tokens = 16
  max_tokens    = 64
  concurrency   = 1
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 100000
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.ollama.native]
  workload = [workload.long]
  model_id = "tiny"
}
output "csv" { path = "%[2]s/results.csv" }
`

// planrun SIGKILLed mid-cell runs none of its shutdown: the Ollama its plan's server
// block started, serve and the runner serve forked, must die anyway. Processes are found
// by the plan's unique directory.
func TestKilledApplyLeavesNoServer(t *testing.T) {
	bin := planrunBinary(t)
	ollama := ollamatest.Require(t)
	dir := t.TempDir()
	modelfile, err := tinymodel.WriteDir(filepath.Join(dir, "model"), tinymodel.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(dir, "kill.hcl")
	if err := os.WriteFile(planPath, fmt.Appendf(nil, killPlan, ollama, dir, port, modelfile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "apply", planPath)
	cmd.Dir = dir
	outPath := filepath.Join(dir, "planrun.out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for _, pid := range proctest.Mentioning(dir) {
			syscall.Kill(pid, syscall.SIGKILL) // what the mechanism failed to kill
		}
	})
	// Mid-cell: serve answers and its runner holds the model.
	deadline := time.Now().Add(120 * time.Second)
	for !hasRunner(dir) {
		if time.Now().After(deadline) {
			said, _ := os.ReadFile(outPath)
			t.Fatalf("no ollama runner under %s after 120s; planrun said:\n%s", dir, said)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // requests are flowing
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline = time.Now().Add(20 * time.Second)
	for left := proctest.Mentioning(dir); len(left) > 0; left = proctest.Mentioning(dir) {
		if time.Now().After(deadline) {
			var ds []string
			for _, pid := range left {
				ds = append(ds, proctest.Describe(pid))
			}
			t.Fatalf("20s after planrun's SIGKILL, still running: %v", ds)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func hasRunner(dir string) bool {
	for _, pid := range proctest.Mentioning(dir) {
		if strings.Contains(proctest.Describe(pid), " runner ") {
			return true
		}
	}
	return false
}

package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

const resumePlan = `
variable "url" { type = string }
variable "tokens" { type = number }
variable "secret" {
  type      = string
  sensitive = true
}
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 16
  max_tokens    = var.tokens
  concurrency   = [1, 2, 3]
  warmup_runs   = 0
  repeat_runs   = 3
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

// A real apply, interrupted with SIGINT after its first level, prints a resume command;
// run exactly as printed (its -var flags are not in it, and the sensitive variable
// comes from the environment again), it completes the run, says which level it skips,
// and the ledger counts each level once. The run is named with -name, which names its
// directory and is left out of the resume command (which continues that directory).
func TestResumeAsPrinted(t *testing.T) {
	bin := planrunBinary(t)
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 10 * time.Millisecond, TPOT: 40 * time.Millisecond}))
	defer srv.Close()
	path := writePlan(t, resumePlan)
	dir := filepath.Dir(path)
	const secret = "s3cret-value-never-saved"
	env := append(os.Environ(), "PLANRUN_VAR_secret="+secret)

	first := exec.Command(bin, "apply", "-gpu=false", "-name", "nightly", "-var", "url="+srv.URL, "-var", "tokens=8", "plan.hcl")
	first.Dir, first.Env = dir, env
	var out bytes.Buffer
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	deadline := time.Now().Add(time.Minute)
	for {
		runs, _ := filepath.Glob(filepath.Join(dir, "results", "nightly-2*", "results.csv"))
		if len(runs) == 1 {
			if rows, _ := ledger.ReadLedger(runs[0]); len(rows) == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no level finished:\n%s", &out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, first); code != exitInterrupted {
		t.Fatalf("interrupted apply: exit %d\n%s", code, &out)
	}
	m := regexp.MustCompile(`Resume with: (.+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no resume command:\n%s", &out)
	}
	printed := m[1]
	if strings.Contains(printed, "tokens") || strings.Contains(printed, srv.URL) {
		t.Errorf("the resume command repeats variable values: %s", printed)
	}
	runDirs, _ := filepath.Glob(filepath.Join(dir, "results", "nightly-2*"))
	if saved, err := os.ReadFile(filepath.Join(runDirs[0], "variables.hcl")); err != nil || bytes.Contains(saved, []byte(secret)) {
		t.Fatalf("variables.hcl: %v\n%s", err, saved)
	}

	// "planrun" on the PATH is the binary under test.
	again := exec.Command("sh", "-c", printed)
	again.Dir = dir
	again.Env = append(env, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	b, err := again.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "Apply complete!") {
		t.Fatalf("resume as printed (%s): %v\n%s", printed, err, b)
	}
	if !strings.Contains(string(b), "resume: m/tiny/-/openai.mock/-/w: skipping c=1, already complete") {
		t.Errorf("resume does not say what it skips:\n%s", b)
	}
	for _, ledgerPath := range []string{filepath.Join(dir, "results", "results.csv"), filepath.Join(runDirs[0], "results.csv")} {
		rows, err := ledger.ReadLedger(ledgerPath)
		if err != nil {
			t.Fatal(err)
		}
		levels := map[int]int{}
		for _, r := range rows {
			levels[r.Concurrency]++
			if r.Status != ledger.StatusOK {
				t.Errorf("%s: c=%d is %s after the resume", ledgerPath, r.Concurrency, r.Status)
			}
		}
		if len(rows) != 3 || levels[1] != 1 || levels[2] != 1 || levels[3] != 1 {
			t.Errorf("%s: rows by level %v, want each of c=1,2,3 once", ledgerPath, levels)
		}
	}
	// The interrupted row is still in the file (the ledger is only appended to).
	raw, _ := os.ReadFile(filepath.Join(dir, "results", "results.csv"))
	if !bytes.Contains(raw, []byte(","+ledger.StatusInterrupted+",")) {
		t.Logf("the interrupt left no interrupted row (it fell between levels)")
	}
}

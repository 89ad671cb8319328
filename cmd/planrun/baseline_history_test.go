package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

// -baseline last:3 with two earlier runs is not a failure: nothing failed and nothing
// regressed. It is its own outcome, said as such ("not enough history"), exit 7, never
// "Apply failed!" over 0 failed cells.
func TestApplyBaselineWithoutEnoughHistory(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	path := writePlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  max_tokens  = 4
  concurrency = [1]
  requests    = 4
  warmup_runs = 0
  repeat_runs = 1
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
`)
	args := []string{"apply", "-quiet", "-gpu=false", "-var", "url=" + srv.URL}
	for i := range 2 {
		if code, out, errs := runCmd(t, "", append(args, path)...); code != exitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, out, errs)
		}
	}
	code, out, errs := runCmd(t, "", append(args, "-baseline", "last:3", path)...)
	if code != exitInsufficient {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInsufficient, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Apply complete, not enough history for -baseline last:3 (exit 7). Cells: 1 ok, 0 failed.") {
		t.Errorf("last line %q", last)
	}
	if strings.Contains(out, "Apply failed!") {
		t.Errorf("apply says it failed:\n%s", out)
	}
	if !strings.Contains(errs, "not enough history: 4 of 4 figure(s) of run") || !strings.Contains(errs, "2 earlier run(s) of this cell and level, a baseline needs 3") {
		t.Errorf("stderr:\n%s", errs)
	}
}

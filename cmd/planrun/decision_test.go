package main

import (
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

const decisionPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 8
  concurrency   = [1]
  warmup_runs   = 0
  repeat_runs   = 2
  requests      = 2
}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
decision "fastest" {
  objective = maximize(result.output_tok_s)
}
`

// TestDecisionAcrossRuns: apply prints its decision under the table, and when a server
// changes between two runs so that another model is the faster (the mock's scripted
// timings swapped, 1 ms against 20 ms a token), compare and history say the decision
// changed. Two runs a level cannot bound throughput, so each answer is indeterminate.
func TestDecisionAcrossRuns(t *testing.T) {
	path := writePlan(t, decisionPlan)
	var runs []string
	for _, fast := range []string{"a", "b"} {
		slow := map[string]string{"a": "b", "b": "a"}[fast]
		srv := httptest.NewServer(mockserver.New(mockserver.Config{ModelTimings: map[string]mockserver.Timing{
			fast: {TTFT: 5 * time.Millisecond, TPOT: time.Millisecond},
			slow: {TTFT: 5 * time.Millisecond, TPOT: 20 * time.Millisecond},
		}}))
		code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, path)
		srv.Close()
		m := regexp.MustCompile(`Results in (.+)/\.`).FindStringSubmatch(out)
		if code != exitOK || m == nil {
			t.Fatalf("apply: exit %d\n%s\n%s", code, out, errs)
		}
		if want := `Decision "fastest": Run ` + fast + ` at c1: output_tok_s `; !strings.Contains(out, want) {
			t.Errorf("apply's summary lacks %q:\n%s", want, out)
		}
		runs = append(runs, m[1])
	}
	code, out, errs := runCmd(t, "", "compare", runs[0], runs[1])
	if want := `decision "fastest" changed: A a at c1 (indeterminate) → B b at c1 (indeterminate)`; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("compare: exit %d, want %q in\n%s\n%s", code, want, out, errs)
	}
	code, out, errs = runCmd(t, "", "compare", "-json", runs[0], runs[1])
	if want := `"decisions": [`; code != exitOK || !strings.Contains(out, want) || !strings.Contains(out, `"changed": true`) {
		t.Errorf("compare -json: exit %d, want the decisions, changed:\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "", "compare", runs[1], runs[1])
	if want := `decision "fastest": unchanged, b at c1 (indeterminate)`; !strings.Contains(out, want) {
		t.Errorf("compare with itself: exit %d, want %q in\n%s\n%s", code, want, out, errs)
	}
	code, out, errs = runCmd(t, "", "history", filepath.Dir(runs[1]))
	first, second := strings.Index(out, "  a at c1 (indeterminate)\n"), strings.Index(out, "  b at c1 (indeterminate)  ← changed\n")
	if code != exitOK || !strings.Contains(out, `decision "fastest" across runs:`) || first < 0 || second < first {
		t.Errorf("history: exit %d (%s)\n%s\n%s", code, filepath.Base(runs[1]), out, errs)
	}
}

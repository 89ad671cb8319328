package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

// Every request meets a 5 s TTFT limit on the mock, so the search's answer is that the
// highest declared level met the target, printed under the summary. The mock takes its
// time (20 ms to the first token, 5 ms a token): on an instant server the client's own
// turn-around between requests is most of each slot's time, and the search rightly
// refuses a capacity the client limited.
func TestApplyPrintsCapacity(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 5 * time.Millisecond}))
	defer srv.Close()
	path := writePlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  max_tokens  = 4
  concurrency = [1, 2]
  warmup_runs = 0
  repeat_runs = 1
  fidelity_lag_ms = 1000 # a late level decides nothing; this test is about the answer's line
  slo {
    ttft_s = 5
  }
  capacity {
    target_attainment_pct = 95
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
`)
	code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, path)
	if code != exitOK {
		t.Fatalf("apply exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	want := "Capacity of m/tiny/-/openai.mock/-/w: concurrency 2 or more at ≥ 95% SLO attainment"
	if !strings.Contains(out, want) {
		t.Fatalf("stdout lacks %q:\n%s", want, out)
	}
}

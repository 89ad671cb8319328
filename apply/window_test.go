package apply

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The case: a level whose two runs' TPOT differ 4x (the server slowed between
// them) is not stable, though their TTFTs agree, and the verdict names TPOT.
func TestStabilityJudgesTPOTAcrossRuns(t *testing.T) {
	ms := time.Millisecond
	cfg := mockserver.Config{TTFT: 20 * ms, TPOT: 2 * ms}
	// The measured runs are the last 8 requests (apply asks a few before them, to
	// calibrate the prompt): run 2 is the last 4, at TPOT 8 ms.
	before := int(runTwoRuns(t, cfg).Requests) - 8
	cfg.Phases = []mockserver.Phase{{From: uint64(before + 5), Timing: mockserver.Timing{TTFT: 20 * ms, TPOT: 8 * ms}}}
	r := runTwoRuns(t, cfg).row
	// TPOT's run medians are 2 and 8 ms: m = 5, spread 60%.
	if r.Stability != "unstable" || r.StabilityFigure != "tpot" || r.TPOTSpread < 0.5 || r.TPOTSpread > 0.7 {
		t.Fatalf("stability %q of %q ±%.3f (TTFT ±%.3f, TPOT ±%.3f, throughput ±%.3f), want unstable on tpot ±0.6",
			r.Stability, r.StabilityFigure, r.StabilitySpread, r.TTFTSpread, r.TPOTSpread, r.OutputSpread)
	}
}

type twoRuns struct {
	row ledger.Row
	mockserver.Stats
}

// runTwoRuns runs one level of 4 requests, twice, against a mock with cfg.
func runTwoRuns(t *testing.T, cfg mockserver.Config) twoRuns {
	t.Helper()
	mock := mockserver.New(cfg)
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 16
  concurrency   = 1
  requests      = 4
  warmup_runs   = 0
  repeat_runs   = 2
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Succeeded != 8 {
		t.Fatalf("rows %+v, want one of 8 successful requests", res.Rows)
	}
	return twoRuns{res.Rows[0], mock.Stats()}
}

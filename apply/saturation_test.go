package apply

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

// stop_when_saturated: an open loop above the mock's capacity (4 queue slots, a
// request holding one for 20 ms + 19 × 5 ms: about 35 requests/s) is stopped early,
// marked over-saturated and says so; one well below it sends all its requests.
func TestStopWhenSaturated(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 5 * time.Millisecond, QueueSlots: 4}))
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "over" {
  prompt_tokens       = 8
  max_tokens          = 20
  concurrency         = 512
  request_rate        = 120
  arrival             = "constant"
  requests            = 240
  warmup_runs         = 0
  repeat_runs         = 1
  stop_when_saturated = true
}
workload "under" {
  prompt_tokens       = 8
  max_tokens          = 20
  concurrency         = 512
  request_rate        = 8
  arrival             = "constant"
  requests            = 32
  warmup_runs         = 0
  repeat_runs         = 1
  stop_when_saturated = true
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.over, workload.under]
}
`, srv.URL)
	res, _ := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, r := range res.Rows {
		over := r.RequestRate > 35
		stopped := strings.Contains(r.Notes, "stopped early, over-saturated (stop_when_saturated): run 1 after ")
		t.Logf("%g req/s: %d requests, %q, stopped %v", r.RequestRate, r.Requests, r.Saturation, stopped)
		if over != stopped || over != (r.Saturation == ledger.SaturationOver) {
			t.Errorf("%g req/s: stopped %v, saturation %q; want both %v (notes: %s)", r.RequestRate, stopped, r.Saturation, over, r.Notes)
		}
		// 240 requests at 120/s take 2 s to send; the test stops them once 24 have
		// finished, about 0.7 s in at 35/s.
		if over && r.Requests >= 240 || !over && r.Requests != 32 {
			t.Errorf("%g req/s: %d requests sent", r.RequestRate, r.Requests)
		}
	}
}

// A closed loop past the mock's slots (8 requests in flight, 2 slots) shows the time its
// requests waited in the server's queue, from the server's own histogram; at the slots'
// count they hardly wait.
func TestClosedLoopQueueTime(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 5 * time.Millisecond, QueueSlots: 2}))
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 20
  concurrency   = [2, 8]
  requests      = 24
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, _ := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	at2, at8 := res.Rows[0], res.Rows[1]
	// Past the slots a request waits for 3 others' 115 ms at most, less while the loop
	// fills and drains: well over 0.1 s on average.
	if at8.ServerQueueMeanS < 0.1 || !strings.Contains(at8.Notes, "concurrency 8 is past the server's slots") {
		t.Errorf("c=8: queue %v s, notes %q", at8.ServerQueueMeanS, at8.Notes)
	}
	if at2.ServerQueueMeanS > at8.ServerQueueMeanS/5 || strings.Contains(at2.Notes, "past the server's slots") {
		t.Errorf("c=2: queue %v s (c=8: %v), notes %q", at2.ServerQueueMeanS, at8.ServerQueueMeanS, at2.Notes)
	}
}

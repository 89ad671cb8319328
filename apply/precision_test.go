package apply

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/mockserver"
)

const precisionPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "closed" {
  prompt_tokens = 8
  max_tokens    = 4
  concurrency   = 4
  requests      = 40
  warmup_runs   = 0
  repeat_runs   = 1
  precision {
    ttft_p50     = "5%"
    max_requests = 4000
  }
}
workload "open" {
  prompt_tokens = 8
  max_tokens    = 4
  request_rate  = 400
  arrival       = "constant"
  concurrency   = 64
  requests      = 40
  warmup_runs   = 0
  repeat_runs   = 1
  precision {
    ttft_p50     = "5%"
    max_requests = 4000
  }
}
workload "capped" {
  prompt_tokens = 8
  max_tokens    = 4
  concurrency   = 4
  confidence    = 90
  requests      = 20
  warmup_runs   = 0
  repeat_runs   = 1
  precision {
    ttft_p50     = "0.01%"
    max_requests = 60
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.closed, workload.open, workload.capped]
  model_id = "mock"
}
`

// A precision block keeps a level sending past its requests until the figure is as
// precise as asked, then stops well before the cap; a figure that never gets there runs
// to the cap, and the row says which. The mock's TTFT is uniform on 20 ± 10 ms, so a
// ±5% median takes a few hundred requests.
func TestPrecisionStopsALevel(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: time.Millisecond,
		Jitter: 10 * time.Millisecond, Seed: 3}))
	defer srv.Close()
	p, cells := loadPlan(t, precisionPlan, srv.URL)
	res, _ := runSamples(t, p, cells)
	rows := map[string]ledger.Row{}
	for _, r := range res.Rows {
		rows[r.Workload] = r
	}
	for _, name := range []string{"closed", "open"} {
		r := rows[name]
		hw := r.TTFT.CI.P50.HalfWidth(r.TTFT.P50)
		t.Logf("%s: %d requests, ttft p50 %.2f ms ±%.2f%%, %s; in flight %.2f, rate delivered %.1f/s",
			name, r.Succeeded, 1000*r.TTFT.P50, 100*hw, r.Notes, r.InFlightMean, r.RateDelivered)
		if r.Status != ledger.StatusOK || r.Succeeded <= 40 || r.Succeeded >= 4000 || !(hw <= 0.05) ||
			!strings.Contains(r.Notes, "precision ttft_p50 ±5%: reached in the run, after ") {
			t.Errorf("%s: %d requests, ttft p50 ±%.2f%%, notes %q: want more than the 40 asked, fewer than the cap, within ±5%%, and saying so",
				name, r.Succeeded, 100*hw, r.Notes)
		}
	}
	if r := rows["open"]; math.Abs(r.RateScheduled-400) > 1e-6 {
		t.Errorf("open loop scheduled %v/s while it kept sending, want its rate, 400", r.RateScheduled)
	}
	if r := rows["capped"]; r.Succeeded != 60 || !strings.Contains(r.Notes, "precision ttft_p50 ±0.01%: not reached in the run: max_requests 60 ended it (the row: ttft_p50 ±") {
		t.Errorf("capped: %d requests, notes %q: want the cap's 60 and the reason", r.Succeeded, r.Notes)
	}
	// Its workload asks for 90% intervals: the row's are, and a p99 needs fewer requests.
	if r := rows["capped"]; r.CI.Confidence != 0.90 || r.TTFT.CI == nil || r.TTFT.CI.Confidence != 0.90 ||
		!strings.Contains(r.Notes, "no 90% interval for p99 from 60 requests (p99 needs 299)") {
		t.Errorf("capped at confidence = 90: row confidence %v, notes %q", r.CI.Confidence, r.Notes)
	}
}

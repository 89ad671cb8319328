package apply

import (
	"math"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
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
		// The run stopped once its interval was within 90% of ±5%; the requests in flight
		// then are measured too and move it a little, which the notes say.
		m := regexp.MustCompile(`precision ttft_p50 ±5%: reached in the run, after (\d+) requests \(ttft_p50 ±([0-9.]+)%\); ` +
			`the row, with the requests in flight at the stop: ttft_p50 ±([0-9.]+)%`).FindStringSubmatch(r.Notes)
		if r.Status != ledger.StatusOK || m == nil {
			t.Fatalf("%s: %s, notes %q: want the precision reached, and saying so", name, r.Status, r.Notes)
		}
		at, _ := strconv.Atoi(m[1])
		stop, _ := strconv.ParseFloat(m[2], 64)
		row, _ := strconv.ParseFloat(m[3], 64)
		if at <= 40 || at >= 4000 || r.Succeeded < at || stop > 4.5 || math.Abs(row-100*hw) > 0.01 || !(hw < 0.075) {
			t.Errorf("%s: stopped after %d requests at ±%v%%, the row %d requests at ±%v%% (notes %q): want past the 40 asked, before the cap, "+
				"within 90%% of ±5%% at the stop, and the row's own figure said", name, at, stop, r.Succeeded, row, r.Notes)
		}
	}
	if r := rows["open"]; math.Abs(r.RateScheduled-400) > 1e-6 {
		t.Errorf("open loop scheduled %v/s while it kept sending, want its rate, 400", r.RateScheduled)
	}
	if r := rows["capped"]; r.Succeeded != 60 || !strings.Contains(r.Notes, "precision ttft_p50 ±0.01%: not reached in the run: max_requests 60 ended it; the row, with the requests in flight at the stop: ttft_p50 ±") {
		t.Errorf("capped: %d requests, notes %q: want the cap's 60 and the reason", r.Succeeded, r.Notes)
	}
	// Its workload asks for 90% intervals: the row's are, and a p99 needs fewer requests.
	if r := rows["capped"]; r.CI.Confidence != 0.90 || r.TTFT.CI == nil || r.TTFT.CI.Confidence != 0.90 ||
		!strings.Contains(r.Notes, "no 90% interval for p99 from 60 requests (p99 needs 299)") {
		t.Errorf("capped at confidence = 90: row confidence %v, notes %q", r.CI.Confidence, r.Notes)
	}
}

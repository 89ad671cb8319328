package apply

import (
	"context"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// energyPlan is one level of three runs against the mock on hardware whose power block
// is power (the body of a power { } block).
const energyPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
hardware "box" {
  power {
%s
  }
}
workload "w" {
  prompt_tokens = 8
  max_tokens    = 16
  concurrency   = 2
  requests      = 4
  warmup_runs   = 0
  repeat_runs   = 3
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  hardware = [hardware.box]
  workload = [workload.w]
}
`

// runEnergy runs energyPlan with the power block body against the mock server and
// returns its one row.
func runEnergy(t *testing.T, body string, o Options) ledger.Row {
	t.Helper()
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: 2 * time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, strings.Replace(energyPlan, "%s", body, 1), srv.URL)
	o.Plan, o.Cells, o.NewBackend = p, cells, newBackend
	if o.GPU == nil {
		o.GPU = gpu.Open()
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Succeeded != 12 {
		t.Fatalf("rows %+v, want one of 12 successful requests", res.Rows)
	}
	return res.Rows[0]
}

// The check: a power command printing a constant wattage gives joules per
// token equal to watts × window ÷ tokens. Each run's window is its tokens over its
// throughput, so with an odd number of runs the median joules per token is exactly
// watts over the median throughput, and the mean power is the wattage.
func TestEnergyFromCommand(t *testing.T) {
	script := filepath.Join(t.TempDir(), "watts.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 250\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runEnergy(t, `source = "command"
    command = ["`+script+`"]
    interval = "20ms"
    price_per_kwh = 0.36
    currency = "USD"`, Options{})
	rel := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }
	if !rel(r.EnergyPerTokenJ, 250/r.OutputTokS) || !rel(r.PowerMeanW, 250) || !rel(r.TokensPerJoule, r.OutputTokS/250) {
		t.Errorf("energy per token %v J (want 250 W / %v tok/s = %v), mean %v W, %v tok/J",
			r.EnergyPerTokenJ, r.OutputTokS, 250/r.OutputTokS, r.PowerMeanW, r.TokensPerJoule)
	}
	// 0.36 a kWh: 0.1 per million tokens for each joule a token.
	if !rel(r.EnergyCostPerMTok, r.EnergyPerTokenJ/10) || !rel(r.CostPerMTok, r.EnergyCostPerMTok) || r.Currency != "USD" {
		t.Errorf("energy cost %v, cost %v %s; want %v", r.EnergyCostPerMTok, r.CostPerMTok, r.Currency, r.EnergyPerTokenJ/10)
	}
	if r.EnergySource != "command "+script+", "+"power samples integrated" || !strings.Contains(r.Notes, "J per output token") {
		t.Errorf("source %q, notes %q", r.EnergySource, r.Notes)
	}
	// Three runs do not bound a median at 95% (six do): the interval says how many would.
	if r.EnergyPerTokenCI.Bounded() || r.EnergyPerTokenCI.Need != 6 {
		t.Errorf("interval %+v from three runs", r.EnergyPerTokenCI)
	}
}

// A rapl source where powercap has no RAPL zone: the row says why it has no energy, and
// its kWh price leaves the cost unknown rather than understated.
func TestEnergyRAPLUnreadable(t *testing.T) {
	r := runEnergy(t, `source = "rapl"
    price_per_kwh = 0.3
    currency = "EUR"`, Options{PowercapRoot: t.TempDir()})
	if !strings.HasPrefix(r.EnergySource, "none: rapl unreadable: no intel-rapl zone") || !math.IsNaN(r.EnergyPerTokenJ) {
		t.Errorf("source %q, energy per token %v", r.EnergySource, r.EnergyPerTokenJ)
	}
	if !math.IsNaN(r.CostPerMTok) || !strings.Contains(r.Notes, "price_per_kwh needs an energy figure") {
		t.Errorf("cost %v, notes %q", r.CostPerMTok, r.Notes)
	}
}

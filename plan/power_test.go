package plan

import (
	"math"
	"slices"
	"testing"
	"time"
)

// The power blocks of testdata/valid-files/power.hcl come out as written there, and a
// price_per_kwh joins its hardware's price (in the plan's one currency).
func TestPowerBlocks(t *testing.T) {
	p, diags := Load("testdata/valid-files/power.hcl", LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	hw := map[string]*Hardware{}
	for _, h := range p.Hardware {
		hw[h.Name] = h
	}
	for _, tc := range []struct {
		name, source, url, query string
		command                  []string
		interval                 time.Duration
		perKWh, perHour          float64
		currency                 string
	}{
		{"gpu", PowerNVML, "", "", nil, 0, math.NaN(), math.NaN(), ""},
		{"cpu", PowerRAPL, "", "", nil, 250 * time.Millisecond, 0.32, 0.5, "EUR"},
		{"plug", PowerCommand, "", "", []string{"sh", "-c", "cat /run/plug-watts"}, 2 * time.Second, 0.25, math.NaN(), "EUR"},
		{"dcgm", PowerPrometheus, "http://gpu1.lab:9400/metrics", "DCGM_FI_DEV_POWER_USAGE", nil, 0, math.NaN(), math.NaN(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pw := hw[tc.name].Power
			if pw == nil {
				t.Fatal("no power block")
			}
			if pw.Source != tc.source || pw.URL != tc.url || pw.Query != tc.query || !slices.Equal(pw.Command, tc.command) || pw.Interval != tc.interval {
				t.Errorf("power %+v", pw)
			}
			if !same(pw.PricePerKWh, tc.perKWh) {
				t.Errorf("price_per_kwh %v, want %v", pw.PricePerKWh, tc.perKWh)
			}
			pr := hw[tc.name].Price
			if math.IsNaN(tc.perKWh) {
				if pr != nil {
					t.Errorf("price %+v without a price_per_kwh", pr)
				}
				return
			}
			if pr == nil || !same(pr.PerKWh, tc.perKWh) || !same(pr.PerHour, tc.perHour) || pr.Currency != tc.currency {
				t.Errorf("price %+v, want per_kwh %v per_hour %v %s", pr, tc.perKWh, tc.perHour, tc.currency)
			}
		})
	}
}

func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

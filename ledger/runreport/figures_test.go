package runreport

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
	"github.com/planrun/planrun/stats"
)

// energyRow is a row metered over 6 runs, with a price per kWh: every figure bounded.
func energyRow() ledger.Row {
	r := ledgertest.SampleRow("m/energy", 2)
	r.EnergySource = "rapl package-0 (/sys/class/powercap), energy counter"
	r.EnergyPerTokenJ, r.EnergyPerTokenCI = 0.412, stats.Interval{Lo: 0.398, Hi: 0.427}
	r.TokensPerJoule, r.TokensPerJouleCI = 2.43, stats.Interval{Lo: 2.34, Hi: 2.51}
	r.PowerMeanW, r.PowerMeanCI = 231.5, stats.Interval{Lo: 228.2, Hi: 236.9}
	r.PricePerKWh, r.Currency = 0.32, "EUR"
	r.EnergyCostPerMTok, r.EnergyCostCI = 0.0366, stats.Interval{Lo: 0.0354, Hi: 0.0379}
	return r
}

// agentRow is a row of agent loops whose requests offered tools, on a busted cache.
func agentRow() ledger.Row {
	r := ledgertest.SampleRow("m/agent", 2)
	r.AgentTasks, r.AgentAnswered, r.AgentStepLimited, r.AgentFailed = 4, 2, 1, 1
	r.AgentSteps = stats.Dist{Mean: 2.5, Max: 4}
	r.AgentTaskTime, r.AgentToolTime, r.AgentModelTime = stats.Dist{P50: 1.2, P90: 2.5}, stats.Dist{P50: 0.3}, stats.Dist{P50: 0.9}
	r.AgentToolSharePct, r.AgentCacheHit = 25, stats.Dist{P50: 62.5, Min: 40}
	r.AgentPerStep = []stats.StepSummary{
		{Step: 1, Requests: 4, Succeeded: 4, TTFT: stats.Dist{P50: 0.1}, PromptTokensMean: 130, CachedTokensMean: math.NaN()},
		{Step: 2, Requests: 3, Succeeded: 3, TTFT: stats.Dist{P50: 0.05}, PromptTokensMean: 300, CachedTokensMean: 256},
	}
	r.ToolRequests, r.ToolCalls, r.ToolCallsValid = 8, 6, 5
	r.ToolCallRatePct, r.ToolCallRateCI = 75, stats.Interval{Lo: 34.9, Hi: 96.8}
	r.ToolCallValidPct, r.ToolCallValidCI = 100*5.0/6, stats.Interval{Lo: 35.9, Hi: 99.6}
	r.ToolCallFirst, r.ToolCallDone = stats.Dist{P50: 0.2, P90: 0.4}, stats.Dist{P50: 0.5, P90: 0.9}
	r.PrefixCache, r.CachedTokens, r.CacheHitPct, r.SharedPrefixPct = "bust", 768, 62.5, 50
	return r
}

// The reports show the energy, agent-loop, tool-call and prefix-cache tables of the rows
// that have those figures, in both languages, and none of them for rows without.
func TestFigureTables(t *testing.T) {
	unbounded := ledgertest.SampleRow("m/short", 1) // 3 runs cannot bound a median's interval
	unbounded.EnergySource, unbounded.EnergyPerTokenJ, unbounded.EnergyPerTokenCI = "nvml GPU 0 total energy, energy counter", 0.5, stats.Unbounded(6)
	noMeter := ledgertest.SampleRow("m/nometer", 1)
	noMeter.EnergySource = "none: rapl unreadable: permission denied"
	reset := ledgertest.SampleRow("m/reset", 1) // reset, on a server that reports no cached count
	reset.PrefixCache = "reset"
	for _, tt := range []struct {
		name   string
		rows   []ledger.Row
		titles []string // the figure tables shown; every other one is absent
		md     []string // lines of the Markdown
		html   []string // cells of the HTML
	}{
		{"energy with a price", []ledger.Row{energyRow(), noMeter}, []string{"Energy"},
			[]string{"| Cell | Conc. | J / output token | Output tokens / J | Mean power (W) | Energy cost (EUR/Mtok) | Source |",
				"| m/energy | 2 | 0.412 (0.398–0.427) | 2.43 (2.34–2.51) | 232 (228–237) | 0.0366 (0.0354–0.0379) | rapl package-0 (/sys/class/powercap), energy counter |",
				"| m/nometer | 1 | — | — | — | — | none: rapl unreadable: permission denied |"},
			[]string{"<td>0.412 (0.398–0.427)</td>", "<td>none: rapl unreadable: permission denied</td>"}},
		{"energy unbounded, no price", []ledger.Row{unbounded}, []string{"Energy"},
			[]string{"| Cell | Conc. | J / output token | Output tokens / J | Mean power (W) | Source |",
				"| m/short | 1 | 0.5 (?–?) | — | — | nvml GPU 0 total energy, energy counter |"},
			[]string{"<td>0.5 (?–?)</td>"}},
		{"agent loops", []ledger.Row{agentRow()}, []string{"Agent loops", "Agent loop steps", "Tool calls", "Prefix cache"},
			[]string{"| m/agent | 2 | 4 | 2 | 1 | 1 | 2.50 / 4 | 1.200 / 2.500 | 0.300 | 0.900 | 25.0 | 62.5 / 40.0 |",
				"| m/agent | 2 | 1 | 4 | 4 | 0.100 | 130.0 | — |",
				"| m/agent | 2 | 2 | 3 | 3 | 0.050 | 300.0 | 256.0 |",
				"| m/agent | 2 | 8 | 6 | 75.0 (34.9–96.8) | 83.3 (35.9–99.6) | 0.200 / 0.400 | 0.500 / 0.900 |",
				"| m/agent | 2 | bust | 768 | 62.5 | 50.0 | — |"},
			[]string{"<td>2.50 / 4</td>", "<td>256.0</td>", "<td>75.0 (34.9–96.8)</td>", "<td>bust</td>"}},
		{"cache reset without a count", []ledger.Row{reset}, []string{"Prefix cache"},
			[]string{"| m/reset | 1 | reset | — | — | — | — |"}, []string{"<td>reset</td>"}},
		{"none", []ledger.Row{ledgertest.SampleRow("m/plain", 1)}, nil, nil, nil},
	} {
		for _, lang := range []string{"", "zh"} {
			t.Run(tt.name+"/"+lang, func(t *testing.T) {
				var md, html bytes.Buffer
				if err := WriteMarkdown(&md, Report{Rows: tt.rows, Language: lang}); err != nil {
					t.Fatal(err)
				}
				if err := WriteHTML(&html, Report{Rows: tt.rows, Language: lang}); err != nil {
					t.Fatal(err)
				}
				for _, ft := range figureTables {
					want := slices.Contains(tt.titles, ft.title)
					if got := strings.Contains(md.String(), "### "+ft.title+"\n"); got != want {
						t.Errorf("Markdown shows %q: %v, want %v", ft.title, got, want)
					}
					if got := strings.Contains(html.String(), "<h4>"+ft.title+"</h4>"); got != want {
						t.Errorf("HTML shows %q: %v, want %v", ft.title, got, want)
					}
				}
				for _, l := range tt.md {
					if !strings.Contains(md.String(), "\n"+l+"\n") {
						t.Errorf("Markdown lacks the line\n%s\n%s", l, md.String())
					}
				}
				for _, c := range tt.html {
					if !strings.Contains(html.String(), c) {
						t.Errorf("HTML lacks %s", c)
					}
				}
			})
		}
	}
}

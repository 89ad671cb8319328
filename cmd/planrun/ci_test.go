package main

import (
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
)

// A gate case names the percentile it was judged on when the rows could not resolve
// the one its threshold names: 40 requests a side judge a p99 threshold on the p90 (a
// p95 needs 72 at 95%), and 10 judge nothing.
func TestBreachCasesNameThePercentileJudged(t *testing.T) {
	p99, _ := compare.ParseThreshold("ttft_p99_s>+10%")
	p50, _ := compare.ParseThreshold("ttft_p50_s>+10%")
	for _, c := range []struct {
		succeeded int
		p99, p50  string
	}{
		{40, "ttft_p99_s>+10% (judged on ttft_p90_s)", "ttft_p50_s>+10%"},
		{250, "ttft_p99_s>+10% (judged on ttft_p95_s)", "ttft_p50_s>+10%"},
		{400, "ttft_p99_s>+10%", "ttft_p50_s>+10%"},
		{10, "ttft_p99_s>+10% (too few requests to judge it)", "ttft_p50_s>+10% (too few requests to judge it)"},
	} {
		a, b := ledger.NewRow(), ledger.NewRow()
		a.RunID, b.RunID, a.CellID, b.CellID = "a", "b", "m/x", "m/x"
		a.Succeeded, b.Succeeded = c.succeeded, c.succeeded
		cases := breachCases([]compare.Delta{{A: &a, B: &b}}, []compare.Threshold{p99, p50}, nil, false)
		if len(cases) != 2 || !strings.HasSuffix(cases[0].Name, " "+c.p99) || !strings.HasSuffix(cases[1].Name, " "+c.p50) {
			var names []string
			for _, x := range cases {
				names = append(names, x.Name)
			}
			t.Errorf("%d requests a side: cases %q, want names ending %q and %q", c.succeeded, names, c.p99, c.p50)
		}
	}
}

package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestWrongUnitWarnings: a latency implausible in its unit, a tolerance written as a
// fraction and an openai url without /v1 are warnings on their value, with the value
// probably meant; plausible values (e2e 120 s, send lag 0.05 ms) are not.
func TestWrongUnitWarnings(t *testing.T) {
	_, diags := Load("testdata/invalid-files/units.hcl", LoadOptions{Getenv: noEnv})
	var got []string
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			got = append(got, strings.SplitN(d.Subject.String(), ":", 2)[1]+" "+d.Detail[:min(len(d.Detail), 32)])
		}
	}
	slices.Sort(got)
	want := []string{
		"13,31-35 result.tpot_p99_ms is in millise",
		"21,35-38 result.ttft_p99_s is in seconds:",
		"4,9-32 An openai backend's url is the b",
		"7,28-32 fidelity_tolerance_pct is in per",
		"9,15-18 ttft_s is in seconds: 500 s is 8",
		"10,15-19 tpot_ms is in milliseconds: 0.05",
		"6,1-13 Workload \"w\" measures too few re", // bounds.go: the defaults, 5 requests at c=1
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

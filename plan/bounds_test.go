package plan

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// A workload whose levels measure too few requests to bound a median is warned about at
// load (validate and plan), naming the levels with their counts and the requests each
// percentile needs at the workload's confidence; a plan that bounds them is not. It is a
// warning: the plan stays valid.
func TestTooFewRequestsWarning(t *testing.T) {
	for _, tc := range []struct {
		name     string
		workload string
		want     []string // in the warning's detail; nil: no warning
		not      []string // levels that must not be named
	}{
		{"first plan", "concurrency = [1, 2]\n repeat_runs = 3",
			[]string{`Workload "w"`, "c=1: 3 (1 a run × repeat_runs 3)", "95% interval", "a p50 needs 6 measured requests", "a p90 36", "a p99 368", "†"},
			[]string{"c=2"}},
		{"the defaults at c=1", "concurrency = [1, 4]",
			[]string{"c=1: 5 (1 a run × repeat_runs 5)"}, []string{"c=4"}},
		{"both levels short", "concurrency = [1, 2]\n repeat_runs = 2",
			[]string{"c=1: 2 (1 a run × repeat_runs 2); c=2: 4 (2 a run × repeat_runs 2)"}, nil},
		{"99% needs more", "confidence = 99\n requests = 6\n repeat_runs = 1",
			[]string{"c=1: 6 (6 a run × repeat_runs 1)", "99% interval", "a p50 needs 8", "a p90 51", "a p99 528"}, nil},
		{"open loop levels", "concurrency = 2\n request_rate = [1, 2]\n requests = 2\n repeat_runs = 2",
			[]string{"c=2 rate=1/s: 4", "c=2 rate=2/s: 4"}, nil},
		{"sessions count their turns", "session {\n turns = 2\n }\n repeat_runs = 2",
			[]string{"c=1: 4 (2 a run × repeat_runs 2)"}, nil},
		{"enough requests", "concurrency = [1, 2]\n requests = 6\n repeat_runs = 1", nil, nil},
		{"enough runs", "concurrency = [1, 2]\n repeat_runs = 6", nil, nil},
		{"a precision block sends until bounded", "repeat_runs = 1\n precision {\n ttft_p50 = \"5%\"\n max_requests = 500\n }", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `
backend "openai" "m" { url = "http://127.0.0.1:8000/v1" }
workload "w" {
 ` + tc.workload + `
}
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.m]
  workload = [workload.w]
}
`
			p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
			if diags.HasErrors() {
				t.Fatalf("errors:\n%s", renderDiags(p, diags))
			}
			var got []*hcl.Diagnostic
			for _, d := range diags {
				if d.Summary == "Too few requests to bound the figures" {
					got = append(got, d)
				}
			}
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("warned:\n%s", renderDiags(p, diags))
				}
				return
			}
			if len(got) != 1 || got[0].Severity != hcl.DiagWarning || got[0].Subject == nil || got[0].Subject.Start.Line != 3 {
				t.Fatalf("want one warning on the workload (line 3):\n%s", renderDiags(p, diags))
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Detail, w) {
					t.Errorf("detail lacks %q:\n%s", w, got[0].Detail)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got[0].Detail, n+":") {
					t.Errorf("detail names %s, which is bounded:\n%s", n, got[0].Detail)
				}
			}
		})
	}
}

package plan

import (
	"strings"
	"testing"
	"time"
)

// A precision block decodes into its figures, half-widths and caps, and each mistake
// gets a diagnostic at its place.
func TestPrecisionBlock(t *testing.T) {
	load := func(block string, extra ...string) (*Plan, string) {
		src := "workload \"w\" {\n  prompt_tokens = 64\n  requests = 50\n" + strings.Join(extra, "") + "  precision {\n" + block + "  }\n}\n"
		p, diags := LoadFiles(t.TempDir(), map[string][]byte{"w.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
		if diags.HasErrors() {
			return nil, renderDiags(p, diags)
		}
		return p, ""
	}
	p, errs := load("    ttft_p50 = \"2%\"\n    tpot_mean = \"1.5%\"\n    max_requests = 5000\n    max_duration = \"5m\"\n")
	if errs != "" {
		t.Fatal(errs)
	}
	pr := p.Workloads[0].Precision
	if pr == nil || len(pr.Targets) != 2 || pr.MaxRequests != 5000 || pr.MaxDuration != 5*time.Minute ||
		pr.Targets[0] != (PrecisionTarget{"ttft_p50", "ttft", 50, 0.02}) || pr.Targets[1] != (PrecisionTarget{"tpot_mean", "tpot", 0, 0.015}) {
		t.Fatalf("precision = %+v", pr)
	}
	if pr.String() != "ttft_p50 ±2%, tpot_mean ±1.5%" || pr.RunRequests() != 5000 {
		t.Errorf("String %q, RunRequests %d", pr.String(), pr.RunRequests())
	}
	for _, c := range []struct{ block, want string }{
		{"    ttft_p5 = \"2%\"\n    max_requests = 100\n", "Error: Unknown precision figure\n  --> w.hcl:5:5"},
		{"    ttft_p50 = \"2\"\n    max_requests = 100\n", "Error: Invalid precision\n  --> w.hcl:5:16"},
		{"    ttft_p50 = \"0%\"\n    max_requests = 100\n", `a percentage above 0 and below 100`},
		{"    ttft_p50 = \"2%\"\n", `Precision without a cap`},
		{"    max_requests = 100\n", `Empty precision block`},
		{"    ttft_p50 = \"2%\"\n    max_requests = 10\n", `max_requests below requests`},
		{"    ttft_p50 = \"2%\"\n    max_duration = \"soon\"\n", `Invalid duration`},
	} {
		if _, errs := load(c.block); !strings.Contains(errs, c.want) || strings.Count(errs, "Error:") != 1 {
			t.Errorf("%q: diagnostics\n%s\nwant one, %q", c.block, errs, c.want)
		}
	}
}

// confidence = 90 | 95 | 99 sets the intervals' confidence; anything else is an error at
// its value, and unset is 95%.
func TestConfidence(t *testing.T) {
	load := func(attr string) (*Plan, string) {
		src := "workload \"w\" {\n  prompt_tokens = 64\n" + attr + "}\n"
		p, diags := LoadFiles(t.TempDir(), map[string][]byte{"w.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
		if diags.HasErrors() {
			return nil, renderDiags(p, diags)
		}
		return p, ""
	}
	for attr, want := range map[string]float64{"": 0.95, "  confidence = 90\n": 0.90, "  confidence = 95\n": 0.95, "  confidence = 99\n": 0.99} {
		p, errs := load(attr)
		if errs != "" || p.Workloads[0].Confidence != want {
			t.Errorf("%q: %s confidence %v, want %v", attr, errs, p, want)
		}
	}
	if _, errs := load("  confidence = 80\n"); !strings.Contains(errs, "Error: Invalid confidence\n  --> w.hcl:3:16") ||
		!strings.Contains(errs, "90, 95 (the default) or 99, not 80") {
		t.Errorf("confidence 80: %s", errs)
	}
}

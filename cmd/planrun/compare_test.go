package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/report"
)

// writeLedger writes one closed-loop row per concurrency with the given TTFT p99 and
// throughput, as a run of 250 requests would (enough to judge a p99).
func writeLedger(t *testing.T, path string, ttftP99, tokS float64) {
	t.Helper()
	l, err := report.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, conc := range []int{1, 4} {
		r := report.NewRow()
		r.CellID, r.Model, r.Tool, r.Workload, r.Concurrency = "m/x", "tiny", "openai.vllm", "w", conc
		r.Requests, r.Succeeded = 250, 250
		r.TTFT.P50, r.TTFT.P99, r.OutputTokS = 0.1, ttftP99, tokS
		if conc == 1 {
			r.TTFT.P99, r.OutputTokS = 0.2, 50 // the planted regression is at c=4 only
		}
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCompareGate(t *testing.T) {
	dir := t.TempDir()
	base, rerun, slow := filepath.Join(dir, "base.csv"), filepath.Join(dir, "rerun.csv"), filepath.Join(dir, "slow.csv")
	writeLedger(t, base, 0.2, 50)
	writeLedger(t, rerun, 0.205, 49.5)
	writeLedger(t, slow, 0.3, 40)
	gate := []string{"-fail-on", "ttft_p99_s>+10%", "-fail-on", "output_tok_s<-5%"}

	code, out, errs := runCmd(t, "", append([]string{"compare", base, rerun}, gate...)...)
	if code != exitOK {
		t.Fatalf("unchanged rerun: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "ttft_p99_s A") {
		t.Errorf("the gated figure is not shown:\n%s", out)
	}
	// A gated headline figure is one column, not two, whichever threshold comes first.
	for _, g := range [][]string{gate, {"-fail-on", "output_tok_s<-5%"}} {
		_, out, _ := runCmd(t, "", append([]string{"compare", base, rerun}, g...)...)
		if n := strings.Count(out, "output_tok_s A"); n != 1 {
			t.Errorf("%v: output_tok_s shown %d times:\n%s", g, n, out)
		}
	}
	code, _, errs = runCmd(t, "", append([]string{"compare", base, slow}, gate...)...)
	if code != exitRegression {
		t.Fatalf("planted regression: exit %d, want %d\n%s", code, exitRegression, errs)
	}
	for _, want := range []string{"tiny/—/—/w c=4 openai.vllm: ttft_p99_s", "+50.0%", "output_tok_s", "-20.0%", "2 threshold crossing(s)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "c=1") {
		t.Errorf("c=1 did not regress but was named:\n%s", errs)
	}
	code, out, _ = runCmd(t, "", append([]string{"compare", "-json", base, slow}, gate...)...)
	if code != exitRegression || !strings.Contains(out, `"breaches": [`) || !strings.Contains(out, `"e2e_p99_s": {`) {
		t.Errorf("-json: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", append([]string{"compare", "-markdown", base, slow}, gate...)...)
	if code != exitRegression || !strings.Contains(out, "**Gate failed**: 2 threshold crossing(s).") ||
		!strings.Contains(out, "- tiny/—/—/w c=4 openai.vllm: ttft_p99_s") {
		t.Errorf("-markdown: exit %d\n%s", code, out)
	}
	code, _, errs = runCmd(t, "", "compare", "-fail-on", "ttft_p99>+10%", base, slow)
	if code != exitUsage || !strings.Contains(errs, `Did you mean "ttft_p99_s"?`) {
		t.Errorf("misspelt figure: exit %d\n%s", code, errs)
	}
}

package main

import (
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

// writeLedger writes one closed-loop row per concurrency with the given TTFT p99 and
// throughput, as a run of 250 requests would (enough to judge a p99).
func writeLedger(t *testing.T, path string, ttftP99, tokS float64) {
	t.Helper()
	l, err := ledger.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, conc := range []int{1, 4} {
		r := ledger.NewRow()
		r.CellID, r.Model, r.Tool, r.Workload, r.Concurrency = "m/x", "tiny", "openai.vllm", "w", conc
		r.Requests, r.Succeeded = 400, 400
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

// writeRows writes one row per concurrency of model with n successful requests, the
// same figures in every file.
func writeRows(t *testing.T, path, model string, n int, concs ...int) {
	t.Helper()
	l, err := ledger.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range concs {
		r := ledger.NewRow()
		r.CellID, r.Model, r.Tool, r.Workload, r.Concurrency = "m/"+model, model, "openai.vllm", "w", c
		r.Requests, r.Succeeded = n, n
		r.TTFT.P50, r.TTFT.P90, r.TTFT.P99, r.OutputTokS = 0.1, 0.2, 0.3, 50
		r.Notes = "measured for " + filepath.Base(path) // two files, two measurements
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

// A gate with no pair of rows to judge fails with its own code and says why; a gate
// that passes says what it judged, and on which percentile.
func TestCompareGateOverNothing(t *testing.T) {
	dir := t.TempDir()
	x, y, small := filepath.Join(dir, "x.csv"), filepath.Join(dir, "y.csv"), filepath.Join(dir, "small.csv")
	writeRows(t, x, "x", 400, 1, 4)
	writeRows(t, y, "y", 400, 1, 4)
	writeRows(t, small, "x", 32, 1, 4)
	gate := []string{"-fail-on", "ttft_p99_s>+10%", "-fail-on", "output_tok_s<-5%"}

	code, out, errs := runCmd(t, "", append([]string{"compare", x, y}, gate...)...)
	if code != exitNothingCompared || !strings.Contains(errs, "nothing compared: no row of A matches a row of B: A has model=x, B has model=y") {
		t.Fatalf("gate over nothing: exit %d, want %d\n%s\n%s", code, exitNothingCompared, out, errs)
	}
	if code, _, errs := runCmd(t, "", "compare", x, y); code != exitOK || !strings.Contains(errs, "nothing compared") {
		t.Errorf("compare without a gate over nothing: exit %d, %s", code, errs)
	}
	code, _, errs = runCmd(t, "", append([]string{"compare", x, x + ""}, gate...)...)
	if code != exitNothingCompared || !strings.Contains(errs, "A and B are the same measurements") {
		t.Errorf("a ledger against itself: exit %d\n%s", code, errs)
	}
	code, _, errs = runCmd(t, "", append([]string{"compare", small, small}, "-fail-on", "ttft_p50_s>+10%")...)
	if code != exitNothingCompared {
		t.Errorf("a ledger against itself: exit %d\n%s", code, errs)
	}

	other := filepath.Join(dir, "x2.csv")
	writeRows(t, other, "x", 400, 1, 4)
	code, _, errs = runCmd(t, "", append([]string{"compare", x, other}, gate...)...)
	if code != exitOK || !strings.Contains(errs, "gate passed: 2 threshold(s) judged on 2 row(s), 4 figure(s)\n") {
		t.Errorf("passing gate: exit %d\n%s", code, errs)
	}
	small2 := filepath.Join(dir, "small2.csv")
	writeRows(t, small2, "x", 32, 1, 4)
	code, _, errs = runCmd(t, "", append([]string{"compare", small, small2}, gate...)...)
	if code != exitOK || !strings.Contains(errs, "gate passed: 2 threshold(s) judged on 2 row(s), 4 figure(s); ttft_p99_s judged on ttft_p50_s in 2 rows: 32 requests cannot resolve p99 (it needs 368)\n") {
		t.Errorf("passing gate on p50: exit %d\n%s", code, errs)
	}
}

// compare ROOT ROOT/RUN: the results directory's ledger holds several runs, said so,
// and its latest is the run named on the other side: the gate judges nothing and fails.
func TestCompareResultsRootWithItsRun(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	path := writePlan(t, applyPlan)
	var runs []string
	for range 2 {
		code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, path)
		m := regexp.MustCompile(`Results in (.+)/\.`).FindStringSubmatch(out)
		if code != exitOK || m == nil {
			t.Fatalf("apply: exit %d\n%s\n%s", code, out, errs)
		}
		runs = append(runs, m[1])
	}
	root := filepath.Dir(runs[1])
	gate := []string{"-fail-on", "ttft_p50_s>+100000%"}
	code, _, errs := runCmd(t, "", append([]string{"compare", root, runs[1]}, gate...)...)
	if code != exitNothingCompared || !strings.Contains(errs, "holds 2 runs (latest first: "+filepath.Base(runs[1])) ||
		!strings.Contains(errs, "A and B are the same measurements (4 row(s) of run "+filepath.Base(runs[1])) {
		t.Fatalf("compare ROOT ROOT/RUN: exit %d\n%s", code, errs)
	}
	// Two runs of 2 and 4 requests a level: their rows carry intervals, and no median
	// from so few is bounded, so even a limit no change reaches cannot pass: each row is
	// indeterminate and says what would resolve it.
	code, _, errs = runCmd(t, "", append([]string{"compare", runs[0], runs[1]}, gate...)...)
	if code != exitIndeterminate || !strings.Contains(errs, "gate indeterminate: 4 answer(s) in 4 row(s) compared") ||
		!strings.Contains(errs, "straddles ttft_p50_s>+100000%: indeterminate; about 20 requests a side would resolve it (the rows have 2)") {
		t.Fatalf("two runs: exit %d\n%s", code, errs)
	}
	code, _, errs = runCmd(t, "", append([]string{"compare", "-fail-on-indeterminate", runs[0], runs[1]}, gate...)...)
	if code != exitRegression {
		t.Fatalf("two runs, -fail-on-indeterminate: exit %d, want %d\n%s", code, exitRegression, errs)
	}
}

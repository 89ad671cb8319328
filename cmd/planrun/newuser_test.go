package main

import (
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
)

// What a new user types wrong, and what planrun answers.
func TestNewUserHints(t *testing.T) {
	for _, c := range []struct {
		args       []string
		code       int
		stream     string // "out" or "err"
		wantSubstr string
	}{
		{[]string{"--version"}, exitOK, "out", "planrun v"},
		{[]string{"-version"}, exitOK, "out", "planrun v"},
		{[]string{"aply"}, exitUsage, "err", `unknown command "aply". Did you mean "apply"?`},
		{[]string{"help", "apply"}, exitOK, "out", "Usage: planrun apply [flags] PLAN"},
		{[]string{"help", "compare"}, exitOK, "out", "Usage: planrun compare"},
		{[]string{"help", "aply"}, exitUsage, "err", `unknown command "aply". Did you mean "apply"?`},
		{[]string{"plan", "-jsn", "x.hcl"}, exitUsage, "err", "unknown flag -jsn. Did you mean -json?"},
		{[]string{"validate", "../../examples/quickstrt.hcl"}, exitError, "err", `no such file or directory. Did you mean "../../examples/quickstart.hcl"?`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := runCmd(t, "", c.args...)
			got := out
			if c.stream == "err" {
				got = errs
			}
			if code != c.code || !strings.Contains(got, c.wantSubstr) {
				t.Fatalf("exit %d (want %d); std%s lacks %q:\n%s", code, c.code, c.stream, c.wantSubstr, got)
			}
		})
	}
}

// An unknown flag gets its error, a did-you-mean and one line that says where the usage
// is, not the usage of every flag (50 lines of apply's); -h still prints it all.
func TestUnknownFlagIsShort(t *testing.T) {
	code, _, errs := runCmd(t, "", "apply", "-resum", "x.hcl")
	if code != exitUsage || strings.Count(errs, "\n") != 3 || !strings.Contains(errs, "Did you mean -resume?") ||
		!strings.HasSuffix(errs, "Run 'planrun apply -h' for its usage.\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant 3 lines: the error, the did-you-mean, where the usage is", code, errs)
	}
	code, _, errs = runCmd(t, "", "apply", "-h")
	if code != exitOK || strings.Count(errs, "\n") < 20 || strings.Contains(errs, "Run 'planrun apply -h'") {
		t.Errorf("apply -h: exit %d, %d lines of usage:\n%s", code, strings.Count(errs, "\n"), errs)
	}
}

// -quiet leaves out routine news such as calibration; without it they are shown.
func TestApplyQuietHasNoCalibrationLines(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	path := writePlan(t, applyPlan)
	results := t.TempDir()
	for _, quiet := range []bool{true, false} {
		args := []string{"apply", "-gpu=false", "-only", "*openai*", "-results", results, "-var", "url=" + srv.URL, path}
		if quiet {
			args = append([]string{"apply", "-quiet"}, args[1:]...)
		}
		code, out, errs := runCmd(t, "", args...)
		if code != exitOK {
			t.Fatalf("apply exit %d\n%s\n%s", code, out, errs)
		}
		if got := strings.Contains(errs, "prompt calibrated"); got == quiet {
			t.Errorf("quiet %v: calibration line shown %v:\n%s", quiet, got, errs)
		}
	}
}

func TestResumeCommandNamesThePlan(t *testing.T) {
	p := &plan.Plan{Variables: []*plan.Variable{{Name: "port"}, {Name: "key", Sensitive: true}}}
	parse := func(args ...string) *flag.FlagSet {
		var a applyArgs
		fs := flag.NewFlagSet("apply", flag.ContinueOnError)
		a.bind(fs)
		fs.BoolVar(&a.GPU, "gpu", true, "")
		fs.StringVar(&a.Resume, "resume", "", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	got := resumeCommand(parse(), "results/run1", "plans/my plan.hcl", &plan.Plan{})
	if want := "planrun apply -resume results/run1 'plans/my plan.hcl'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The run's flags are repeated, but not -var and -var-file (the run directory's
	// variables.hcl holds their values), nor any value of a variable.
	got = resumeCommand(parse("-var", "port=1", "-var-file=v.hcl", "-only", "a/*", "-only", "b", "-gpu=false", "-resume", "old"), "r", "p.hcl", p)
	want := "planrun apply -resume r -gpu=false '-only=a/*' -only=b p.hcl\n(sensitive variables are not saved: set key again, with -var or PLANRUN_VAR_<name>)"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// plan counts the levels apply runs (concurrency × request rate), shows the rates, and
// its JSON carries the load settings.
func TestPlanWithRequestRates(t *testing.T) {
	path := writePlan(t, `
backend "openai" "x" { url = "http://127.0.0.1:9/v1" }
workload "w" {
  concurrency  = [4, 8]
  request_rate = [1, 2, 5]
  requests     = 7
  repeat_runs  = 2
  max_tokens   = 64
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.x]
  workload = [workload.w]
}
`)
	code, out, errs := runCmd(t, "", "plan", path)
	if code != exitOK || !strings.Contains(out, "1,2,5") ||
		!strings.HasSuffix(out, "Plan: 1 cell, 6 levels (concurrency × request rate), 84 measured requests.\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd(t, "", "plan", "-json", path)
	for _, want := range []string{`"request_rates": [`, `"arrival": "poisson"`, `"max_tokens": 64`, `"requests_per_run": 7`, `"measured_requests": 84`} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("plan -json lacks %s:\n%s", want, out)
		}
	}
}

// fmt given a TOML file (as examples/* names one) skips it with a pointer to convert
// instead of reporting HCL syntax errors.
func TestFmtSkipsTOML(t *testing.T) {
	dir := t.TempDir()
	toml := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(toml, []byte("[server]\nurl = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd(t, "", "fmt", "-check", toml)
	if code != exitOK || !strings.Contains(errs, "skipping "+toml+": fmt formats HCL plans, not TOML; planrun convert") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
}

// compare -h describes the baseline's noise band as the code computes it (and as the
// docs do): a 99.5% prediction interval of the baseline runs, not "3 robust σ".
func TestCompareHelpDescribesTheBand(t *testing.T) {
	_, out, errs := runCmd(t, "", "compare", "-h")
	help := strings.Join(strings.Fields(out+errs), " ")
	if !strings.Contains(help, "99.5% prediction interval for one more run like the baseline's") || strings.Contains(help, "robust σ") {
		t.Errorf("compare -h does not describe the band as history.noiseBand computes it:\n%s", out+errs)
	}
}

// planrun history PLAN reads where the plan writes: the directory of its output "csv"
// (the quickstart's is ../results/quickstart), not only <plan dir>/results.
func TestHistoryOfAPlanReadsWhereItWrites(t *testing.T) {
	root := t.TempDir()
	planPath := filepath.Join(root, "plans", "p.hcl")
	os.MkdirAll(filepath.Dir(planPath), 0o755)
	os.WriteFile(planPath, []byte(`
backend "openai" "m" { url = "http://127.0.0.1:1/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 8
}
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.m]
  workload = [workload.w]
}
output "csv" { path = "../out/here/results.csv" }
`), 0o644)
	os.MkdirAll(filepath.Join(root, "out", "here"), 0o755)
	l, err := ledger.OpenLedger(filepath.Join(root, "out", "here", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	r := ledger.NewRow()
	r.Plan, r.RunID, r.CellID, r.Status, r.Concurrency, r.Succeeded = "p", "p-1", "m/x/-/openai.m/-/w", ledger.StatusOK, 1, 30
	r.Started = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l.Append(r)
	l.Close()
	code, out, errs := runCmd(t, "", "history", planPath)
	if code != exitOK || !strings.Contains(out, "m/x/-/openai.m/-/w c=1") {
		t.Fatalf("history %s: exit %d\n%s%s", planPath, code, out, errs)
	}
}

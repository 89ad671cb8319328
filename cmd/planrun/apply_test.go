package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/servers/mockserver"
)

const applyPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 8
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 2
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.ollama.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

func writePlan(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestApplyCommandAndCompare(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	path := writePlan(t, applyPlan)

	code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, path)
	if code != exitOK {
		t.Fatalf("apply exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	m := regexp.MustCompile(`Apply complete! Cells: 2 ok, 0 failed\. Results in (.+)/\.`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary line in:\n%s", out)
	}
	runDir := m[1]
	if !filepath.IsAbs(runDir) {
		t.Fatalf("run dir %q: outside the working directory it must be shown absolute", runDir)
	}
	for _, want := range []string{"m/tiny/-/openai.mock/-/w", "m/tiny/-/ollama.mock/-/w", "TTFT p50"} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary table lacks %q:\n%s", want, out)
		}
	}

	code, out, errs = runCmd(t, "", "compare", "-tools", "openai.mock,ollama.mock", runDir)
	if code != exitOK || !strings.Contains(out, "Δ% = (ollama.mock − openai.mock) / openai.mock") {
		t.Fatalf("compare exit %d:\n%s\n%s", code, out, errs)
	}
	if got := strings.Count(out, "tiny"); got != 2 {
		t.Fatalf("compare should pair 2 levels, got %d rows:\n%s", got, out)
	}
	code, _, errs = runCmd(t, "", "compare", "-tools", "openai.mock,vllm.nope", runDir)
	if code != exitError || !strings.Contains(errs, `no rows for tool "vllm.nope"`) {
		t.Fatalf("unknown tool: exit %d, %s", code, errs)
	}
}

func TestApplyExitCodes(t *testing.T) {
	mock := mockserver.New(mockserver.Config{APIKey: "k"})
	srv := httptest.NewServer(mock)
	defer srv.Close()

	// The openai backend sends no key: the probe sees it refused (401) and its cell fails
	// before measuring, with the reason; the ollama cell is fine.
	code, out, errs := runCmd(t, "", "apply", "-quiet", "-var", "url="+srv.URL, writePlan(t, applyPlan))
	if code != exitCellsFailed || !strings.Contains(out, "Apply failed! Cells: 1 ok, 1 failed") ||
		!strings.Contains(out, "Cell m/tiny/-/openai.mock/-/w failed: backend openai.mock") || !strings.Contains(out, "401 Unauthorized") {
		t.Fatalf("failing cell: exit %d\n%s\n%s", code, out, errs)
	}

	// An expect block that fails wins over cell failures: exit 3, naming cell and values.
	expect := applyPlan + `
expect "fast" {
  condition     = result.ttft_p50_s < 0
  error_message = "TTFT must be negative."
}`
	code, _, errs = runCmd(t, "", "apply", "-quiet", "-only", "*ollama*", "-var", "url="+srv.URL, writePlan(t, expect))
	if code != exitExpectation || !strings.Contains(errs, `expect "fast" failed for m/tiny/-/ollama.mock/-/w`) || !strings.Contains(errs, "result.ttft_p50_s = ") ||
		!strings.Contains(errs, "condition: result.ttft_p50_s < 0 (plan.hcl:") {
		t.Fatalf("expectation: exit %d\n%s", code, errs)
	}

	// A malformed plan: diagnostics, exit 1, and no request sent.
	before := mock.Stats().Requests
	code, _, errs = runCmd(t, "", "apply", "-var", "url="+srv.URL, writePlan(t, applyPlan+"\nworkload \"w\" {}\n"))
	if code != exitError || !strings.Contains(errs, "plan.hcl:") {
		t.Fatalf("malformed plan: exit %d\n%s", code, errs)
	}
	if after := mock.Stats().Requests; after != before {
		t.Fatalf("a malformed plan sent %d requests", after-before)
	}
}

func TestApplyWithoutGPUSampling(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.hcl")
	os.WriteFile(path, []byte(applyPlan), 0o644)
	if code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-only", "*openai*", "-var", "url="+srv.URL, path); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	ledger, _ := os.ReadFile(filepath.Join(dir, "results", "results.csv"))
	if !strings.Contains(string(ledger), "sampling turned off for this run (-gpu=false)") {
		t.Fatalf("the rows must say GPU sampling was off:\n%s", ledger)
	}
}

// A dead backend, a keyed backend without its key and two healthy cells: the broken cells
// fail at once with their reasons, the last line says so, and the exit code is the table's.
func TestApplyFailedCellsAreShownWithTheirReasons(t *testing.T) {
	healthy := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer healthy.Close()
	keyed := mockserver.New(mockserver.Config{APIKey: "k"})
	keyedSrv := httptest.NewServer(keyed)
	defer keyedSrv.Close()
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close() // nothing listens there any more

	src := strings.Replace(applyPlan, `backend "ollama" "mock" { url = var.url }`, `backend "ollama" "mock" { url = var.url }
backend "openai" "dead" { url = "`+deadURL+`/v1" }
backend "openai" "keyed" {
  url         = "`+keyedSrv.URL+`/v1"
  api_key_env = "KEYED_API_KEY"
}`, 1)
	src = strings.Replace(src, `tool     = [backend.openai.mock, backend.ollama.mock]`,
		`tool     = [backend.openai.mock, backend.openai.dead, backend.openai.keyed, backend.ollama.mock]`, 1)
	code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+healthy.URL, writePlan(t, src))
	if code != exitCellsFailed {
		t.Fatalf("exit %d, want %d (a cell failed)\n%s\n%s", code, exitCellsFailed, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Apply failed! Cells: 2 ok, 2 failed.") {
		t.Fatalf("last line %q, want Apply failed with the counts", last)
	}
	for _, cell := range []string{"openai.dead", "openai.keyed"} {
		if !regexp.MustCompile(`m/tiny/-/` + regexp.QuoteMeta(cell) + `/-/w +c=1 +failed`).MatchString(out) {
			t.Errorf("summary table lacks the failed row of %s:\n%s", cell, out)
		}
	}
	for _, want := range []string{
		"Cell m/tiny/-/openai.dead/-/w failed: backend openai.dead at " + deadURL + "/v1 cannot serve requests: connection refused",
		"Cell m/tiny/-/openai.keyed/-/w failed: backend openai.keyed at " + keyedSrv.URL + "/v1 cannot serve requests: environment variable KEYED_API_KEY is not set",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := keyed.Stats().Requests; n != 0 {
		t.Errorf("%d requests sent to the backend without its key", n)
	}

	// summary.json says the same, validates, and records the command line.
	runDir := regexp.MustCompile(`Results in (.+)/\.`).FindStringSubmatch(out)[1]
	summary, err := os.ReadFile(filepath.Join(runDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, ledger.SummarySchema, summary)
	s, err := ledger.ReadSummary(bytes.NewReader(summary))
	if err != nil || s.Outcome != ledger.OutcomeFailed || len(s.Cells) != 4 || strings.Join(s.Plan.Command[:3], " ") != "planrun apply -quiet" {
		t.Errorf("summary.json: outcome %q, %d cells, command %q (%v)", s.Outcome, len(s.Cells), s.Plan.Command, err)
	}

	// The table is in apply -h, with the rule for which code wins.
	code, _, errs = runCmd(t, "", "apply", "-h")
	if code != exitOK || !strings.Contains(errs, "when several apply, the first in this list wins") || !strings.Contains(errs, "4    a cell failed") {
		t.Fatalf("apply -h: exit %d, no exit code table:\n%s", code, errs)
	}
}

// A missing key fails every cell of its backend before any request, and apply says so
// once on each stream: one note, and one "Cells … failed" line naming both cells.
func TestApplyMissingKeySaidOnce(t *testing.T) {
	mock := mockserver.New(mockserver.Config{APIKey: "k"})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	dir := t.TempDir()
	plan := `
backend "openai" "keyed" {
  url         = "` + srv.URL + `/v1"
  api_key_env = "PLANRUN_TEST_UNSET_KEY"
}
workload "w" {
  max_tokens  = 4
  warmup_runs = 0
  repeat_runs = 1
}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.openai.keyed]
  workload = [workload.w]
}
`
	path := filepath.Join(dir, "plan.hcl")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "", "apply", "-gpu=false", "-results", filepath.Join(dir, "results"), path)
	if code != exitCellsFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitCellsFailed, out, errs)
	}
	const reason = "PLANRUN_TEST_UNSET_KEY is not set"
	if n := strings.Count(errs, reason); n != 1 {
		t.Errorf("the missing key is noted %d times, want once:\n%s", n, errs)
	}
	if n := strings.Count(out, reason); n != 1 || !strings.Contains(out, "Cells m/a/-/openai.keyed/-/w, m/b/-/openai.keyed/-/w failed: ") {
		t.Errorf("the summary says the reason %d times, want once for both cells:\n%s", n, out)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Errorf("%d requests sent without the key", n)
	}
}

// apply -name names the run directory NAME-<start time>; a name that is no plain file
// name, or one beside -resume (whose directory has its name), is bad usage and runs
// nothing.
func TestApplyName(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	plan := writePlan(t, applyPlan)
	dir := filepath.Dir(plan)
	for _, args := range [][]string{{"-name", "../escape"}, {"-name", "a b"}, {"-name", "ok", "-resume", dir}} {
		code, _, errb := runCmd(t, "", append(append([]string{"apply", "-quiet", "-gpu=false", "-var", "url=" + srv.URL}, args...), plan)...)
		if code != exitUsage || !strings.Contains(errb, "-name:") {
			t.Errorf("apply %v: exit %d, want %d naming -name:\n%s", args, code, exitUsage, errb)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); !os.IsNotExist(err) {
		t.Fatalf("a refused -name created results/: %v", err)
	}
	code, out, errb := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-name", "h200_nightly", "-var", "url="+srv.URL, plan)
	if code != exitOK {
		t.Fatalf("apply -name: exit %d\n%s\n%s", code, out, errb)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "results", "h200_nightly-20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]-[0-5][0-9]-[0-5][0-9]"))
	if len(runs) != 1 {
		t.Fatalf("run directories named h200_nightly-<time>: %v\n%s", runs, out)
	}
}

// Notes and errors name paths under the working directory relative to it: a resumed
// run whose cells are complete says so naming its run directory as results/..., not
// by the absolute path apply was given.
func TestNotesUseRelativePaths(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	// Enough requests to bound each level (no warning, whose snippet names the plan as given).
	plan := writePlan(t, strings.Replace(applyPlan, "repeat_runs   = 2", "repeat_runs   = 2\n  requests      = 6", 1))
	dir := filepath.Dir(plan)
	t.Chdir(dir)
	if code, out, errb := runCmd(t, "", "apply", "-gpu=false", "-var", "url="+srv.URL, plan); code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errb)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "results", "plan-2*"))
	if len(runs) != 1 || !filepath.IsAbs(runs[0]) {
		t.Fatalf("run directories: %v", runs)
	}
	code, out, errb := runCmd(t, "", "apply", "-gpu=false", "-var", "url="+srv.URL, "-resume", runs[0], plan)
	rel := filepath.Join("results", filepath.Base(runs[0]))
	if code != exitOK || !strings.Contains(errb, "already complete in "+rel+", skipped") || strings.Contains(errb+out, dir+"/") {
		t.Fatalf("resume: exit %d; want notes naming %s, and no absolute path under %s:\n%s\n%s", code, rel, dir, out, errb)
	}
	// An error's paths too: a run directory with another plan's manifest.
	other := writePlan(t, strings.Replace(applyPlan, "max_tokens", "# another plan\n  max_tokens", 1))
	code, _, errb = runCmd(t, "", "apply", "-gpu=false", "-var", "url="+srv.URL, "-resume", runs[0], other)
	if code == exitOK || !strings.Contains(errb, "cannot resume "+rel+":") {
		t.Fatalf("resume with another plan: exit %d, want an error naming %s:\n%s", code, rel, errb)
	}
}

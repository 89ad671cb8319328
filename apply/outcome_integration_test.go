package apply

// The honest outcome, end to end: a plan with a dead backend (a closed port), a keyed
// backend whose key is not in the environment, and two healthy cells on the real tiny
// Ollama. Every cell must be in every output with its status and reason, nothing may be
// sent to the broken backends after the probe, and summary.json must validate against
// its schema and hold the CSV's figures.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

const outcomePlan = `
variable "url"       { type = string }
variable "dead_url"  { type = string }
variable "keyed_url" { type = string }
variable "note" {
  type      = string
  default   = "s3cret-value"
  sensitive = true
}
backend "ollama" "real"  { url = var.url }
backend "openai" "real"  { url = "${var.url}/v1" }
backend "openai" "dead"  { url = "${var.dead_url}/v1" }
backend "openai" "keyed" {
  url         = "${var.keyed_url}/v1"
  api_key_env = "PLANRUN_TEST_UNSET_KEY"
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 8
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.ollama.real, backend.openai.dead, backend.openai.keyed, backend.openai.real]
  workload = [workload.w]
  model_id = "tiny"
}
`

func TestEveryCellAccountedFor(t *testing.T) {
	s := realOllama(t)
	keyed := mockserver.New(mockserver.Config{APIKey: "k"})
	keyedSrv := httptest.NewServer(keyed)
	defer keyedSrv.Close()

	dir := t.TempDir()
	src := []byte(outcomePlan)
	if err := os.WriteFile(filepath.Join(dir, "plan.hcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	p, cells := loadPlanFile(t, filepath.Join(dir, "plan.hcl"), "url="+s.URL, "dead_url="+closedPort(t), "keyed_url="+keyedSrv.URL)
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	noEnv := func(string) string { return "" }
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, GPU: gpu.Open(),
		NewBackend: func(c backends.Config) (backends.Backend, error) { c.Getenv = noEnv; return connect.New(c) }})
	if err != nil {
		t.Fatal(err)
	}

	// The reason each broken cell must carry.
	want := map[string]string{
		"m/tiny/-/ollama.real/-/w":  "",
		"m/tiny/-/openai.real/-/w":  "",
		"m/tiny/-/openai.dead/-/w":  "connection refused",
		"m/tiny/-/openai.keyed/-/w": "PLANRUN_TEST_UNSET_KEY",
	}
	if ok, failed, _, _ := res.Counts(); ok != 2 || failed != 2 {
		t.Fatalf("cells ok=%d failed=%d, want 2 and 2: %+v", ok, failed, res.Cells)
	}
	for _, c := range res.Cells {
		if reason := want[c.ID]; reason != "" && (c.Status != ledger.StatusFailed || !strings.Contains(c.Notes, reason)) {
			t.Errorf("cell %s: %s %q, want failed because of %q", c.ID, c.Status, c.Notes, reason)
		}
	}
	if n := keyed.Stats().Requests; n != 0 {
		t.Errorf("%d requests reached the keyed backend without its key", n)
	}

	// The run's CSV and the ledger: every cell, the broken ones failed with the reason.
	runCSV := readFile(t, filepath.Join(res.RunDir, "results.csv"))
	for _, path := range []string{filepath.Join(res.RunDir, "results.csv"), res.LedgerPath} {
		rows, err := ledger.ReadLedger(path)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.CellID] = true
			if r.RunID == "" || r.RunID != readManifest(t, res.RunDir).RunID || r.Host == "" {
				t.Errorf("%s: row without the run id or host: %q %q", path, r.RunID, r.Host)
			}
			if reason := want[r.CellID]; reason != "" && (r.Status != ledger.StatusFailed || r.Requests != 0 || !strings.Contains(r.Notes, reason)) {
				t.Errorf("%s %s: %s, %d requests, notes %q; want failed before measuring because of %q", path, r.CellID, r.Status, r.Requests, r.Notes, reason)
			}
		}
		for id := range want {
			if !seen[id] {
				t.Errorf("%s: no row for cell %s", path, id)
			}
		}
	}

	// The Markdown and HTML reports name every cell, and the reason of each failed one.
	for _, name := range []string{"report.md", ledger.HTMLFile} {
		text := string(readFile(t, filepath.Join(res.RunDir, name)))
		for id, reason := range want {
			if !strings.Contains(text, id) || !strings.Contains(text, reason) {
				t.Errorf("%s lacks cell %s or its reason %q", name, id, reason)
			}
		}
	}

	// requests.jsonl: only the healthy cells sent requests, each with run id and host.
	recs := readSamples(t, res.RunDir)
	if len(recs) != 2*2*2 {
		t.Fatalf("requests.jsonl: %d records; want 2 cells × 2 levels × 2 requests", len(recs))
	}
	for _, r := range recs {
		if want[r.CellID] != "" {
			t.Fatalf("a request was sent for broken cell %s", r.CellID)
		}
		if r.RunID != readManifest(t, res.RunDir).RunID || r.Host == "" {
			t.Fatalf("sample %s: run id %q host %q", r.ID, r.RunID, r.Host)
		}
	}

	summary := readFile(t, filepath.Join(res.RunDir, "summary.json"))
	summarytest.Validate(t, ledger.SummarySchema, summary)
	summarytest.MatchesCSV(t, summary, runCSV)
	var sum ledger.Summary
	if err := json.Unmarshal(summary, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != ledger.OutcomeFailed || len(sum.Cells) != 4 {
		t.Errorf("summary outcome %q with %d cells, want failed with 4", sum.Outcome, len(sum.Cells))
	}

	// The run directory repeats the run: the plan's files, the variables (the sensitive
	// one redacted).
	if got := readFile(t, filepath.Join(res.RunDir, "plan", "plan.hcl")); !bytes.Equal(got, src) {
		t.Error("plan/plan.hcl is not a copy of the plan")
	}
	vars := string(readFile(t, filepath.Join(res.RunDir, "variables.hcl")))
	if !strings.Contains(vars, `url = "`+s.URL+`"`) || strings.Contains(vars, "s3cret") || strings.Contains(string(summary), "s3cret") {
		t.Errorf("variables.hcl must hold url and not the sensitive value:\n%s", vars)
	}
	if sum.Plan.Variables["note"] != "(sensitive)" {
		t.Errorf("summary variables: %v", sum.Plan.Variables)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readManifest(t *testing.T, dir string) ledger.Manifest {
	t.Helper()
	m, err := ledger.ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

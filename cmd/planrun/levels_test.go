package main

import (
	"encoding/json"
	"encoding/xml"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

// levelsPlan has two cells whose levels differ by a rate alone and by embeddings inputs
// alone; the expect holds only below 8 requests/s and for a single input, so exactly
// one level of each cell fails it (an inputs=1 level sends 4 × 2 × 8 input tokens, an
// inputs=4 level four times as many).
const levelsPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "openai" "embed" {
  url = "${var.url}/v1"
  api = "embeddings"
}
workload "paced" {
  max_tokens      = 4
  concurrency     = [4]
  request_rate    = [5, 10]
  arrival         = "constant"
  requests        = 6
  warmup_runs     = 0
  repeat_runs     = 1
  fidelity_lag_ms = 1000
}
workload "embed" {
  concurrency = [2]
  warmup_runs = 0
  repeat_runs = 2
  requests    = 4
  embeddings {
    inputs       = [1, 4]
    input_tokens = [8]
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.paced]
  model_id = "mock"
}
matrix "e" {
  model    = ["tiny"]
  tool     = [backend.openai.embed]
  workload = [workload.embed]
  model_id = "mock"
}
expect "slow_rates_only" {
  condition     = coalesce(result.rate_scheduled_per_s, 0) < 8 && coalesce(result.input_tokens, 0) < 100
  error_message = "too fast"
}
`

// Levels that differ only by rate or by embeddings inputs are told apart everywhere a
// level is named: JUnit test names (unique, with the failure on the level that failed,
// counts as summary.json's), expect messages and the terminal table, which also has a
// fidelity column, an embeddings row's input tokens/s and its stability over two runs.
func TestLevelsDifferingByRateOrInputs(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	path := writePlan(t, levelsPlan)
	junitPath := filepath.Join(t.TempDir(), "junit.xml")
	code, out, errs := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, "-junit", junitPath, path)
	if code != exitExpectation {
		t.Fatalf("apply exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitExpectation, out, errs)
	}
	for _, want := range []string{"c=4 rate=5/s", "c=4 rate=10/s", "c=2 inputs=1 len=8", "c=2 inputs=4 len=8", "FIDELITY", " in "} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "inputs=") && strings.Contains(line, "single-run") {
			t.Errorf("an embeddings level of 2 runs reads single-run: %s", line)
		}
	}
	for _, want := range []string{"failed for m/tiny/-/openai.mock/-/paced at c=4 rate=10/s", "failed for e/tiny/-/openai.embed/-/embed at c=2 inputs=4 len=8"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "at c=4 rate=5/s:") || strings.Contains(errs, "at c=2 inputs=1 len=8:") {
		t.Errorf("a passing level named as failed:\n%s", errs)
	}

	b, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Class   string    `xml:"classname,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	names, failed := map[string]bool{}, map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			key := c.Class + " " + c.Name
			if names[key] {
				t.Errorf("two test cases named %q", key)
			}
			names[key] = true
			if c.Failure != nil {
				failed[c.Name] = true
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "results", "*", "summary.json"))
	if len(dirs) != 1 {
		t.Fatalf("summary.json files %v", dirs)
	}
	raw, _ := os.ReadFile(dirs[0])
	var sum struct {
		ExpectFailures []string         `json:"expect_failures"`
		Rows           []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	// One cell case and one expect case per row.
	if doc.Tests != 2*len(sum.Rows) || doc.Failures != len(sum.ExpectFailures) || len(sum.ExpectFailures) != 2 {
		t.Fatalf("junit tests=%d failures=%d; summary.json: %d rows, %d expect failures\n%s", doc.Tests, doc.Failures, len(sum.Rows), len(sum.ExpectFailures), b)
	}
	for _, want := range []string{"slow_rates_only: m/tiny/-/openai.mock/-/paced c=4 rate=10/s", "slow_rates_only: e/tiny/-/openai.embed/-/embed c=2 inputs=4 len=8"} {
		if !failed[want] {
			t.Errorf("junit: %q not failed; failed: %v", want, failed)
		}
	}
}

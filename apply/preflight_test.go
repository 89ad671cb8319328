package apply

// Fail before sending: a cell the server cannot serve (a model it does not list, a url
// without /v1, a missing key) fails at its probe, with the reason said once and what the
// server has, and no generation request reaches the server.

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

const preflightPlan = `
variable "url" { type = string }
backend "ollama" "real" { url = var.url }
backend "openai" "real" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "typo" {
  model    = ["tinny"]
  tool     = [backend.ollama.real, backend.openai.real]
  workload = [workload.w]
  model_id = "tinny"
}
`

// generationLine is a request for tokens in Ollama's access log (GIN), on either API.
var generationLine = regexp.MustCompile(`\| +POST +"/(api/(chat|generate)|v1/(chat/)?completions)"`)

func generationsLogged(t *testing.T, logPath string) int {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	return len(generationLine.FindAllIndex(b, -1))
}

// A misspelt model on the real Ollama fails both cells (native and /v1) before any
// request for tokens, saying what the server has and the name meant.
func TestRealOllamaMisspeltModelFailsBeforeSending(t *testing.T) {
	s := realOllama(t)
	p, cells := loadPlan(t, preflightPlan, s.URL)
	before := generationsLogged(t, s.LogPath)
	rec := &noteRecorder{}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Progress: rec})
	if err != nil {
		t.Fatal(err)
	}
	if n := generationsLogged(t, s.LogPath) - before; n != 0 {
		t.Errorf("the server logged %d generation requests for a model it does not have:\n%s", n, s.LogTail(4<<10))
	}
	want := map[string][]string{
		"typo/tinny/-/ollama.real/-/w": {`model "tinny" is not on the Ollama server`, "it has: tiny:latest", `Did you mean "tiny"?`, "`ollama pull tinny`"},
		"typo/tinny/-/openai.real/-/w": {`model "tinny" is not served at ` + s.URL + "/v1", "the server has: tiny:latest", `Did you mean "tiny"?`, "No request was sent"},
	}
	if len(res.Cells) != 2 {
		t.Fatalf("cells %+v", res.Cells)
	}
	for _, c := range res.Cells {
		if c.Status != ledger.StatusFailed {
			t.Errorf("%s: %s, want failed", c.ID, c.Status)
		}
		for _, w := range want[c.ID] {
			if !strings.Contains(c.Notes, w) {
				t.Errorf("%s: notes %q lack %q", c.ID, c.Notes, w)
			}
		}
	}
	// One failed row per cell for the outcome table, and no request recorded.
	if len(res.Rows) != 2 {
		t.Errorf("%d rows, want one failed row per cell", len(res.Rows))
	}
	if recs := readSamples(t, res.RunDir); len(recs) != 0 {
		t.Errorf("%d requests recorded for cells that failed before sending", len(recs))
	}
}

// A url without /v1 (404 on /models) fails the cells before sending, with the url meant,
// as does an ollama url with /v1 (404 on /api/version); a missing key fails its backend's cells with one note, not one per cell.
func TestPreflightFailuresSaidOnce(t *testing.T) {
	mock := mockserver.New(mockserver.Config{Models: []string{"m"}})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	src := `
variable "url" { type = string }
backend "openai" "nov1" { url = var.url }
backend "ollama" "withv1" { url = "${var.url}/v1" }
backend "openai" "keyed" {
  url         = "${var.url}/v1"
  api_key_env = "PLANRUN_TEST_UNSET_KEY"
}
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "x" {
  model    = ["m", "n"]
  tool     = [backend.openai.nov1, backend.openai.keyed, backend.ollama.withv1]
  workload = [workload.w]
  model_id = "m"
}
`
	p, cells := loadPlan(t, src, srv.URL)
	rec := &noteRecorder{}
	noEnv := func(string) string { return "" }
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, GPU: gpu.Off(), Progress: rec,
		NewBackend: func(c backends.Config) (backends.Backend, error) { c.Getenv = noEnv; return connect.New(c) }})
	if err != nil {
		t.Fatal(err)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Errorf("%d generation requests sent", n)
	}
	hint := "did you mean " + srv.URL + "/v1?"
	for _, c := range res.Cells {
		want := hint
		switch {
		case strings.Contains(c.ID, "keyed"):
			want = "PLANRUN_TEST_UNSET_KEY is not set"
		case strings.Contains(c.ID, "withv1"):
			want = "An ollama backend's url is the server root, without /v1 (that is for an openai backend): did you mean " + srv.URL + "?"
		}
		if c.Status != ledger.StatusFailed || !strings.Contains(c.Notes, want) {
			t.Errorf("%s: %s %q, want failed saying %q", c.ID, c.Status, c.Notes, want)
		}
	}
	notes := rec.text()
	for _, w := range []string{"PLANRUN_TEST_UNSET_KEY is not set", hint} {
		if n := strings.Count(notes, w); n != 1 {
			t.Errorf("%q noted %d times, want once:\n%s", w, n, notes)
		}
	}
	if recs := readSamples(t, res.RunDir); len(recs) != 0 || len(res.Rows) != len(cells) {
		t.Errorf("%d requests recorded, %d rows for %d cells that never ran", len(recs), len(res.Rows), len(cells))
	}
}

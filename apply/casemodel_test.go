package apply

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// casePlan names the model the server lists as "tiny" (Ollama: "tiny:latest") with
// other case, on both protocols.
const casePlan = `
variable "url" { type = string }
backend "ollama" "t" {
  url          = var.url
  ensure_model = "check"
}
backend "openai" "t" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "case" {
  model    = ["tiny"]
  tool     = [backend.ollama.t, backend.openai.t]
  workload = [workload.w]
  model_id = "%s"
}
`

// A model_id that differs from a listed name only in case is refused before any
// request, on Ollama too (which would answer it, leaving the rows without the model's
// digest), naming the listed spelling; the listed spelling itself is measured.
func TestModelIDCaseOnly(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want []string // in each cell's notes; nil: measured
	}{
		{"Tiny", []string{`model_id "Tiny" differs only in case from "tiny`, `set model_id = "tiny"`, "No request was sent"}},
		{"TINY:latest", []string{`model_id "TINY:latest" differs only in case from "tiny`, `set model_id = "tiny"`}},
		{"tiny", nil},
	} {
		t.Run(tc.id, func(t *testing.T) {
			mock := mockserver.New(mockserver.Config{Models: []string{"tiny"}})
			srv := httptest.NewServer(mock)
			defer srv.Close()
			p, cells := loadPlan(t, strings.Replace(casePlan, "%s", tc.id, 1), srv.URL)
			res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Cells) != 2 {
				t.Fatalf("cells %+v", res.Cells)
			}
			for _, c := range res.Cells {
				if tc.want == nil {
					if c.Status != ledger.StatusOK {
						t.Errorf("%s: %s (%s), want ok", c.ID, c.Status, c.Notes)
					}
					continue
				}
				if c.Status != ledger.StatusFailed {
					t.Errorf("%s: %s, want failed", c.ID, c.Status)
				}
				for _, w := range tc.want {
					if !strings.Contains(c.Notes, w) {
						t.Errorf("%s: notes %q lack %q", c.ID, c.Notes, w)
					}
				}
			}
			if n := mock.Stats().Requests; tc.want != nil && n != 0 {
				t.Errorf("%d generation requests sent for a refused model_id", n)
			}
		})
	}
}

// On the real Ollama, which answers a name in any case: the model's name with its
// first letter upper-cased is refused on both APIs before any request for tokens.
func TestRealOllamaModelIDCaseOnly(t *testing.T) {
	s := realOllama(t)
	id := strings.ToUpper(s.Model[:1]) + s.Model[1:]
	p, cells := loadPlan(t, strings.Replace(casePlan, "%s", id, 1), s.URL)
	before := generationsLogged(t, s.LogPath)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := generationsLogged(t, s.LogPath) - before; n != 0 {
		t.Errorf("the server logged %d generation requests for a refused model_id:\n%s", n, s.LogTail(4<<10))
	}
	for _, c := range res.Cells {
		if want := `set model_id = "` + s.Model + `"`; c.Status != ledger.StatusFailed || !strings.Contains(c.Notes, want) {
			t.Errorf("%s: %s, notes %q; want failed, naming %s", c.ID, c.Status, c.Notes, want)
		}
	}
}

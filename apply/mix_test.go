package apply

import (
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/mockserver"
)

const mixPlan = `
variable "url" { type = string }
variable "extra" {
  type    = string
  default = "tiny-c"
}
backend "openai" "gw" { url = "${var.url}/v1" }
workload "mix" {
  prompt_tokens = 8
  max_tokens    = 2
  concurrency   = [8]
  warmup_runs   = 0
  repeat_runs   = 2
  requests      = 400
  seed          = 7
  models        = { "tiny-a" = 2, "tiny-b" = 1, (var.extra) = 1 }
}
matrix "m" {
  model    = ["mix"]
  tool     = [backend.openai.gw]
  workload = [workload.mix]
  model_id = "tiny-a"
}
`

// The acceptance check of a model mix: a weighted mix of three names sends each name its
// share of the requests within sampling error (3σ of the binomial), the server gets each
// request under the name the sample records, and every run sends the same sequence.
func TestModelMixShares(t *testing.T) {
	srv := mockserver.New(mockserver.Config{Models: []string{"tiny-a", "tiny-b", "tiny-c"}, RecordTruth: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, mixPlan, hs.URL)
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusOK {
		t.Fatalf("rows %+v", res.Rows)
	}
	seq := map[int][]string{} // each run's model names by request number
	counts := map[string]int{}
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || tr.Model != r.Model || r.Err != nil {
			t.Fatalf("%s: sent to %q, the server got %q (%v), error %v", r.ID, r.Model, tr.Model, ok, r.Err)
		}
		n, _ := strconv.Atoi(r.ID[strings.LastIndex(r.ID, "/req")+4:])
		if seq[r.Run] == nil {
			seq[r.Run] = make([]string, 400)
		}
		seq[r.Run][n] = r.Model
		counts[r.Model]++
	}
	if strings.Join(seq[0], ",") != strings.Join(seq[1], ",") {
		t.Errorf("the two runs sent different sequences of model names")
	}
	total := float64(len(recs))
	for name, w := range map[string]float64{"tiny-a": 0.5, "tiny-b": 0.25, "tiny-c": 0.25} {
		want, sigma := total*w, math.Sqrt(total*w*(1-w))
		if d := math.Abs(float64(counts[name]) - want); d > 3*sigma {
			t.Errorf("%s got %d of %v requests, want %.0f ± %.0f (3σ)", name, counts[name], total, want, 3*sigma)
		}
	}
	t.Logf("shares over %v requests: %v", total, counts)
	// The row gives each name's own figures beside the pooled ones.
	for name, n := range counts {
		if want := name + ": " + strconv.Itoa(n) + " requests"; !strings.Contains(res.Rows[0].ModelMix, want) {
			t.Errorf("row's model_mix %q lacks %q", res.Rows[0].ModelMix, want)
		}
	}
	t.Logf("model_mix: %s", res.Rows[0].ModelMix)

	// A mix naming a model the server does not list fails the cell before any of its
	// requests is sent, with the server's list.
	before := len(srv.Truths())
	p, cells = loadPlanFile(t, writePlan(t, mixPlan), "url="+hs.URL, "extra=tiny-lora-x")
	res, _ = runSamples(t, p, cells)
	if res.Rows[0].Status != ledger.StatusFailed || !strings.Contains(res.Rows[0].Notes, `"tiny-lora-x"`) ||
		!strings.Contains(res.Rows[0].Notes, "tiny-a, tiny-b, tiny-c") {
		t.Errorf("absent mix model: status %s, notes %q", res.Rows[0].Status, res.Rows[0].Notes)
	}
	// Only the probe's one test request (to model_id) reached the server.
	if after := srv.Truths()[before:]; len(after) != 1 || after[0].Model != "tiny-a" || after[0].OutputTokens > 2 {
		t.Errorf("%d requests reached the server for a cell whose mix names an absent model, want the probe's one: %+v", len(after), after)
	}
}

// writePlan writes src as plan.hcl in a temp dir and returns its path.
func writePlan(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

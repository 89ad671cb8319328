package apply

import (
	"bytes"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/servers/mockserver"
)

// decisionPlan measures three models on a mock with scripted timing: fast-a and fast-b
// alike (TPOT 2 ms), mid five times slower per token (TPOT 10 ms). Eight runs a level
// bound throughput's interval across runs at 95%.
const decisionPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 16
  concurrency   = [4]
  warmup_runs   = 1
  repeat_runs   = 8
  requests      = 8
}
matrix "m" {
  model    = ["fast-a", "fast-b", "mid"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
decision "sure" {
  objective = maximize(result.output_tok_s)
  cells     = ["m/fast-a/*", "m/mid/*"]
}
decision "alike" {
  objective = maximize(result.output_tok_s)
  cells     = ["m/fast-*"]
}
decision "floor" {
  objective   = maximize(result.output_tok_s)
  constraints = [result.tpot_p50_ms >= 5]
}
decision "none" {
  objective   = maximize(result.output_tok_s)
  constraints = [result.ttft_p50_s <= 0.01]
}
`

// TestDecisionOnScriptedCells is the decision a person would make from cells of known
// speed: the fast model surely over the slow one; between two alike, indeterminate, with
// how many more runs would settle it; the slow one where a floor on TPOT rules the fast
// ones out, each by about 3 ms; none where no model's first token comes within 10 ms,
// each excluded by at least the 10 ms its scripted TTFT (20 ms) is over (a busy machine
// only adds to a TTFT; it can shift a TPOT either way, so no limit is set near one). The
// report opens with the decision, and summary.json holds it.
func TestDecisionOnScriptedCells(t *testing.T) {
	srv := mockserver.New(mockserver.Config{ModelTimings: map[string]mockserver.Timing{
		"fast-a": {TTFT: 20 * time.Millisecond, TPOT: 2 * time.Millisecond},
		"fast-b": {TTFT: 20 * time.Millisecond, TPOT: 2 * time.Millisecond},
		"mid":    {TTFT: 20 * time.Millisecond, TPOT: 10 * time.Millisecond},
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, decisionPlan, hs.URL)
	res, _ := runSamples(t, p, cells)
	if len(res.Decisions) != 4 {
		t.Fatalf("%d decisions, want 4", len(res.Decisions))
	}
	byName := map[string]ledger.Decision{}
	for _, d := range res.Decisions {
		byName[d.Name] = d
	}
	chosen := func(d ledger.Decision) string {
		if d.Chosen == nil {
			return ""
		}
		return d.Chosen.Cell
	}
	if d := byName["sure"]; d.Outcome != ledger.DecisionSure || !strings.HasPrefix(chosen(d), "m/fast-a/") || !strings.HasPrefix(d.RunnerUp.Cell, "m/mid/") {
		t.Errorf("sure: %s (%s), chose %s", d.Outcome, d.Reason, chosen(d))
	}
	if d := byName["alike"]; d.Outcome != ledger.DecisionIndeterminate || d.NeedUnit != "runs" || d.Need <= 8 {
		t.Errorf("alike: %s (%s), need %d %s; want indeterminate, more than the 8 runs", d.Outcome, d.Reason, d.Need, d.NeedUnit)
	}
	d := byName["floor"]
	if d.Outcome != ledger.DecisionSure || !strings.HasPrefix(chosen(d), "m/mid/") {
		t.Errorf("floor: %s (%s), chose %s, want mid", d.Outcome, d.Reason, chosen(d))
	}
	for _, c := range d.Candidates {
		if strings.HasPrefix(c.Cell, "m/fast-") && (c.Status != ledger.CandidateExcluded || math.Abs(float64(c.Checks[0].By)+3) > 1.5) {
			t.Errorf("floor: %s %s, under the 5 ms floor by %v, want about -3", c.Cell, c.Status, c.Checks[0].By)
		}
	}
	d = byName["none"]
	if d.Outcome != ledger.DecisionNone || d.Chosen != nil || len(d.Candidates) != 3 {
		t.Fatalf("none: %s (%s), chose %s", d.Outcome, d.Reason, chosen(d))
	}
	for _, c := range d.Candidates {
		if by := float64(c.Checks[0].By); c.Status != ledger.CandidateExcluded || by < 0.0099 || by > 1 {
			t.Errorf("none: %s %s by %v s, want excluded by at least 0.01 s", c.Cell, c.Status, by)
		}
	}

	md, err := os.ReadFile(filepath.Join(res.RunDir, ledger.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	dec, results := bytes.Index(md, []byte("## Decision")), bytes.Index(md, []byte("## Results"))
	if dec < 0 || results < 0 || dec > results {
		t.Errorf("report.md does not open with its decision:\n%s", md)
	}
	for _, want := range []string{"### sure", "**Sure**", "**Indeterminate**", "**None**", "decision-sure.png"} {
		if !bytes.Contains(md[:results], []byte(want)) {
			t.Errorf("the Decision section lacks %q:\n%s", want, md[:results])
		}
	}
	sum, err := os.ReadFile(filepath.Join(res.RunDir, ledger.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, ledger.SummarySchema, sum)
	back, err := ledger.ReadSummary(bytes.NewReader(sum))
	if err != nil || len(back.Decisions) != 4 || back.Decisions[0].Outcome != byName["sure"].Outcome {
		t.Errorf("summary.json decisions %+v (%v)", back.Decisions, err)
	}
}

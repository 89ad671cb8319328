package apply

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

const reasoningPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "ollama" "mock" { url = var.url }
backend "openai" "responses" {
  url = "${var.url}/v1"
  api = "responses"
}
workload "think" {
  prompt_tokens    = 16
  max_tokens       = 40
  concurrency      = [2]
  warmup_runs      = 0
  repeat_runs      = 2
  requests         = 4
  reasoning_effort = "high"
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.ollama.mock, backend.openai.responses]
  workload = [workload.think]
  model_id = "mock"
}
expect "answer_after_reasoning" {
  condition     = result.ttfo_p50_s > result.ttft_p50_s && result.reasoning_tokens > 0 && result.answer_tokens > 0
  error_message = "TTFO is not after TTFT, or the tokens were not split."
}
`

// The acceptance check of reasoning streams: against a server whose reasoning and answer
// timing is known (the mock's truth per request: when it wrote each chunk), TTFT (first
// token of any kind), TTFO (first answer token) and the reasoning and answer token counts
// are within 1% of the truth, over OpenAI deltas (reasoning_content, usage with
// reasoning_tokens), the Responses API's events (reasoning_text and output_text deltas,
// usage on response.completed) and Ollama's thinking field (no reasoning count: chunks counted, and
// the row says so). The truth is taken from the request's own start stamp (client and
// mock share the machine's clock), so a loaded machine's delay in sending the request,
// which is in TTFT but not in the server's schedule, does not blur the comparison. The
// truth of each stamp is the span in which the mock wrote the chunk (its stamps before
// the write and after the flush): a loaded machine can take the mock off the CPU between
// its write and its second stamp, and the client then reads the chunk before it; and a
// client off the CPU reads several chunks in one read, whose one kernel stamp is that of
// the newest (readSpans). A mock off the CPU past several chunks' times writes them at
// once, reasoning and answer together: a reasoning span of 0 is then the truth.
func TestReasoningAgainstTruth(t *testing.T) {
	const reasoning, answer = 20, 20
	srv := mockserver.New(mockserver.Config{TTFT: 300 * time.Millisecond, TPOT: 10 * time.Millisecond,
		ReasoningTokens: reasoning, ReasoningUsage: true, RecordTruth: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, reasoningPlan, hs.URL)
	res, recs := runSamples(t, p, cells)
	if len(res.ExpectFailures) != 0 {
		t.Errorf("expect failures: %v", res.ExpectFailures)
	}
	within := func(what, id string, got time.Duration, want span) {
		if float64(got) < 0.99*float64(want.lo) || float64(got) > 1.01*float64(want.hi) {
			t.Errorf("%s %s = %v, truth %v (written %v … %v): off by more than 1%%", id, what, got, want.hi, want.lo, want.hi)
		}
	}
	truthTTFO := map[string][2][]float64{} // per cell: the spans' starts and ends
	truthSpan := map[string][2][]float64{}
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || r.Err != nil {
			t.Fatalf("%s: truth %v, error %v", r.ID, ok, r.Err)
		}
		written := make([]span, len(tr.Chunks)) // one delta per chunk: one token each
		for i, c := range tr.Chunks {
			written[i] = span{c.Writing.Sub(r.Start), c.Written.Sub(r.Start)}
		}
		truth := readSpans(t, r.ID, written, r.ChunkArrivals, tr.Ended.Sub(r.Start))
		wantTTFT, wantTTFO := truth[0], truth[firstAnswer(t, tr)]
		ttft, _ := r.TTFT()
		ttfo, ok := r.TTFO()
		if !ok {
			t.Fatalf("%s: no TTFO", r.ID)
		}
		within("TTFT", r.ID, ttft, wantTTFT)
		within("TTFO", r.ID, ttfo, wantTTFO)
		if span, ok := r.ReasoningSpan(); !ok || span != ttfo-ttft || span < 0 {
			t.Errorf("%s: reasoning span %v (%v), want TTFO − TTFT = %v", r.ID, span, ok, ttfo-ttft)
		}
		if r.ReasoningTokens != tr.ReasoningTokens() || r.ReasoningTokens != reasoning || r.AnswerTokens() != answer {
			t.Errorf("%s: reasoning %d answer %d tokens, truth %d and %d", r.ID, r.ReasoningTokens, r.AnswerTokens(), tr.ReasoningTokens(), answer)
		}
		wantSource := backends.TokensUsage
		if strings.Contains(r.CellID, "ollama") {
			wantSource = backends.TokensChunks // Ollama reports no reasoning count
		}
		if r.ReasoningTokenSource != wantSource {
			t.Errorf("%s: reasoning token source %q, want %q", r.ID, r.ReasoningTokenSource, wantSource)
		}
		// E2E against the truth too; TPOT over the answer alone is (E2E − TTFO) over the
		// answer's tokens after its first.
		within("E2E", r.ID, r.E2E(), truth[len(truth)-1])
		if d, ok := r.AnswerTPOT(); !ok || d != (r.E2E()-ttfo)/time.Duration(answer-1) {
			t.Errorf("%s: answer TPOT %v (%v), want (E2E − TTFO) / %d", r.ID, d, ok, answer-1)
		}
		ts := truthTTFO[r.CellID]
		truthTTFO[r.CellID] = [2][]float64{append(ts[0], wantTTFO.lo.Seconds()), append(ts[1], wantTTFO.hi.Seconds())}
		// The span within what the 1% on TTFT and TTFO allows.
		ss := truthSpan[r.CellID]
		truthSpan[r.CellID] = [2][]float64{append(ss[0], max(0.99*wantTTFO.lo.Seconds()-1.01*wantTTFT.hi.Seconds(), 0)),
			append(ss[1], 1.01*wantTTFO.hi.Seconds()-0.99*wantTTFT.lo.Seconds())}
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(res.Rows))
	}
	for _, row := range res.Rows {
		// Each request's TTFO lies in its span, so their median lies between the spans'
		// medians.
		lo, hi := median(truthTTFO[row.CellID][0]), median(truthTTFO[row.CellID][1])
		if row.TTFO.P50 < 0.99*lo || row.TTFO.P50 > 1.01*hi {
			t.Errorf("%s: ttfo p50 %v, truth median %v (written %v … %v)", row.CellID, row.TTFO.P50, hi, lo, hi)
		}
		if row.ReasoningTokens != 8*reasoning || row.AnswerTokens != 8*answer || row.OutputTokens != 8*(reasoning+answer) {
			t.Errorf("%s: reasoning %d answer %d output %d tokens, want %d, %d, %d", row.CellID,
				row.ReasoningTokens, row.AnswerTokens, row.OutputTokens, 8*reasoning, 8*answer, 8*(reasoning+answer))
		}
		// The span's median against the truth's, not a floor: a mock off the CPU through
		// the reasoning writes it with the answer (a span of 0, truly).
		slo, shi := median(truthSpan[row.CellID][0]), median(truthSpan[row.CellID][1])
		if !(row.TTFO.P50 > row.TTFT.P50) || row.ReasoningSpan.P50 < slo || row.ReasoningSpan.P50 > shi || row.ReasoningSpan.N != 8 {
			t.Errorf("%s: TTFT %v TTFO %v span %v of %d, truth median %v … %v", row.CellID, row.TTFT.P50, row.TTFO.P50,
				row.ReasoningSpan.P50, row.ReasoningSpan.N, slo, shi)
		}
		if strings.Contains(row.CellID, "ollama") != strings.Contains(row.Notes, "reasoning tokens counted from reasoning chunks") {
			t.Errorf("%s: notes %q", row.CellID, row.Notes)
		}
	}
	checkReasoningOutputs(t, res)
}

// firstAnswer is the index of tr's first chunk carrying answer tokens.
func firstAnswer(t *testing.T, tr mockserver.Truth) int {
	t.Helper()
	for i, c := range tr.Chunks {
		if c.Tokens > c.Reasoning {
			return i
		}
	}
	t.Fatalf("%s: no answer chunk written", tr.ID)
	return 0
}

// span is when, since a request's start, the mock began to write a chunk and when its
// flush returned.
type span struct{ lo, hi time.Duration }

// checkReasoningOutputs: the CSV, summary.json and the report name TTFO apart from TTFT.
func checkReasoningOutputs(t *testing.T, res *Result) {
	t.Helper()
	rows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(rows) != 3 || math.Abs(rows[0].TTFO.P50-res.Rows[0].TTFO.P50) > 1e-6 {
		t.Fatalf("ledger: %v rows, %v", len(rows), err)
	}
	for _, col := range []string{"ttfo_p50_s", "ttfo_p90_s", "ttfo_p95_s", "ttfo_p99_s", "ttfo_mean_s", "ttfo_std_s", "reasoning_tokens", "answer_tokens"} {
		if !slices.Contains(ledger.Header(), col) {
			t.Errorf("CSV header lacks %s", col)
		}
	}
	raw, err := os.ReadFile(filepath.Join(res.RunDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Rows) != 3 {
		t.Fatalf("summary.json: %v", err)
	}
	if sum.Rows[0]["ttfo_p50_s"] == nil || sum.Rows[0]["reasoning_tokens"] == nil || sum.Rows[0]["ttfo_p50_s"] == sum.Rows[0]["ttft_p50_s"] {
		t.Errorf("summary.json row: ttfo %v ttft %v reasoning %v", sum.Rows[0]["ttfo_p50_s"], sum.Rows[0]["ttft_p50_s"], sum.Rows[0]["reasoning_tokens"])
	}
	md, _ := os.ReadFile(res.ReportPath)
	for _, want := range []string{"### Reasoning", "TTFO p50 (s)", "TTFT p50 (s)", "Reasoning tokens"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

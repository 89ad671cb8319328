package apply

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

const toolPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "anthropic" "mock" { url = "${var.url}/v1" }
backend "ollama" "mock" { url = var.url }
workload "agent" {
  prompt_tokens = 16
  max_tokens    = 12
  concurrency   = [2]
  warmup_runs   = 0
  repeat_runs   = 2
  requests      = 10
  tool "get_weather" {
    description = "The weather at a place"
    parameters = {
      type       = "object"
      properties = { city = { type = "string" }, days = { type = "integer" } }
      required   = ["city"]
    }
  }
  tool "now" {}
  tool_choice = "auto"
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.anthropic.mock, backend.ollama.mock]
  workload = [workload.agent]
  model_id = "mock"
}
`

// The tool-call acceptance check: against the mock, which answers a seeded share of the
// requests offering tools with a call whose tokens are its arguments, each row's
// tool-call rate is the share of calls the server sent, every call is valid, and each
// request's time to the call's first part and to its completion is within 1% of when
// the server wrote them, on OpenAI chat, Messages and Ollama streams alike (deltas a
// loaded client read at once sharing that read's stamp, as readSpans says).
func TestToolCallsAgainstTruth(t *testing.T) {
	srv := mockserver.New(mockserver.Config{TTFT: 100 * time.Millisecond, TPOT: 10 * time.Millisecond, TokensPerChunk: 3,
		ToolCallRate: 0.5, Seed: 7, RecordTruth: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, toolPlan, hs.URL)
	res, recs := runSamples(t, p, cells)
	within := func(what, id string, got time.Duration, want span) {
		if float64(got) < 0.99*float64(want.lo) || float64(got) > 1.01*float64(want.hi) {
			t.Errorf("%s %s = %v, truth %v … %v: off by more than 1%%", id, what, got, want.lo, want.hi)
		}
	}
	called := map[string]int{}
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || r.Err != nil {
			t.Fatalf("%s: truth %v, error %v", r.ID, ok, r.Err)
		}
		if r.ToolsOffered != 2 || r.ToolCalled() != (tr.ToolCall != "") {
			t.Fatalf("%s: offered %d, called %v; the server called %q", r.ID, r.ToolsOffered, r.ToolCalled(), tr.ToolCall)
		}
		if tr.ToolCall == "" {
			continue
		}
		called[r.CellID]++
		c := r.ToolCalls[0]
		first, done, ok := r.ToolCallTimes()
		if len(r.ToolCalls) != 1 || c.Name != tr.ToolCall || !ok || !r.ToolCallValid() || r.OutputTokens != tr.OutputTokens {
			t.Errorf("%s: calls %+v (times ok %v, valid %v), %d tokens; the server called %s with %d tokens", r.ID, r.ToolCalls, ok, r.ToolCallValid(), r.OutputTokens, tr.ToolCall, tr.OutputTokens)
			continue
		}
		firstChunk, last := tr.Chunks[0], tr.Chunks[len(tr.Chunks)-1]
		// The call ends in the last delta (the Messages API's content_block_stop in the
		// stream's end), and a loaded client may read that with the end, whose write the
		// mock can be taken off the CPU before: its stamp is then the end's (readSpans).
		wantDone := span{last.Writing.Sub(r.Start), tr.Ended.Sub(r.Start)}
		wantFirst := span{firstChunk.Writing.Sub(r.Start), firstChunk.Written.Sub(r.Start)}
		// The first part's read brought the deltas sharing its stamp, and each chunk is
		// one or more of them: the newest chunk it can have carried is the last of those.
		n := 0
		for n < len(r.ChunkArrivals) && r.ChunkArrivals[n] == r.ChunkArrivals[0] {
			n++
		}
		if n == len(r.ChunkArrivals) {
			wantFirst.hi = wantDone.hi
		} else {
			wantFirst.hi = max(wantFirst.hi, tr.Chunks[min(n, len(tr.Chunks))-1].Written.Sub(r.Start))
		}
		if strings.Contains(r.CellID, "ollama") {
			wantFirst = wantDone // Ollama sends the call whole, once parsed
		}
		within("tool call first", r.ID, first, wantFirst)
		within("tool call done", r.ID, done, wantDone)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, row := range res.Rows {
		want := 100 * float64(called[row.CellID]) / 20
		if row.ToolRequests != 20 || row.ToolCalls != called[row.CellID] || row.ToolCallRatePct != want || row.ToolCallValidPct != 100 ||
			!(row.ToolCallRateCI.Lo <= want && want <= row.ToolCallRateCI.Hi) || row.ToolCallFirst.N != called[row.CellID] {
			t.Errorf("%s: %d of %d called (%.1f%%, CI %.1f–%.1f), %.1f%% valid, %d first times; the server called %d (%.1f%%)", row.CellID,
				row.ToolCalls, row.ToolRequests, row.ToolCallRatePct, row.ToolCallRateCI.Lo, row.ToolCallRateCI.Hi, row.ToolCallValidPct,
				row.ToolCallFirst.N, called[row.CellID], want)
		}
		if called[row.CellID] == 0 || called[row.CellID] == 20 {
			t.Errorf("%s: the seeded mock called %d of 20: the test needs both kinds", row.CellID, called[row.CellID])
		}
	}
	checkToolColumns(t, res)
}

// checkToolColumns: the ledger and result.* name the tool-call figures.
func checkToolColumns(t *testing.T, res *Result) {
	t.Helper()
	rows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(rows) != 3 || rows[0].ToolCallRatePct != res.Rows[0].ToolCallRatePct {
		t.Fatalf("ledger: %d rows, %v", len(rows), err)
	}
	for _, col := range []string{"tool_call_rate_pct", "tool_call_valid_pct", "tool_call_first_p50_s", "tool_call_done_p99_s", "tool_call_rate_pct_lo"} {
		if !slices.Contains(ledger.Header(), col) {
			t.Errorf("CSV header lacks %s", col)
		}
	}
}

// examples/tool-calls.hcl runs on the mock as its comment says.
func TestToolCallsExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: 200 * time.Microsecond, ToolCallRate: 0.5})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/tool-calls.hcl", "url="+srv.URL+"/v1")
	res, _ := runSamples(t, p, cells)
	if len(res.Rows) != 4 {
		t.Fatalf("%d rows, want 2 backends × 2 levels", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Succeeded != r.Requests || r.ToolRequests != 40 || !(r.ToolCallRatePct > 0 && r.ToolCallRatePct < 100) || r.ToolCallValidPct != 100 {
			t.Errorf("%s: %d/%d ok, %d offered, rate %.1f%%, valid %.1f%%", r.CellID, r.Succeeded, r.Requests, r.ToolRequests, r.ToolCallRatePct, r.ToolCallValidPct)
		}
	}
}

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

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/servers/mockserver"
)

const agentPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "anthropic" "mock" { url = "${var.url}/v1" }
workload "agent" {
  prompt_tokens = 16
  max_tokens    = 6
  concurrency   = [2]
  warmup_runs   = 0
  repeat_runs   = 2
  tool "search" {
    parameters = { type = "object", properties = { q = { type = "string" } }, required = ["q"] }
  }
  session {
    turns    = 2
    sessions = 3
    agent {
      max_steps       = 6
      tool_latency_ms = 30
      result_tokens   = 12
    }
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.anthropic.mock]
  workload = [workload.agent]
  model_id = "mock"
}
`

// The agent-loop acceptance check: against the mock scripted to call a tool twice and
// then answer, on OpenAI chat and Messages streams alike, every turn takes three steps,
// each step's prompt and cached tokens are the server's (the cache serves every earlier
// step's prompt), the time in tools lies between two steps' requests and in none, and
// the row's task figures count it all.
func TestAgentLoopAgainstTruth(t *testing.T) {
	srv := mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: time.Millisecond, ToolCalls: 2, PrefixCache: true, RecordTruth: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p, cells := loadPlan(t, agentPlan, hs.URL)
	res, recs := runSamples(t, p, cells)
	const tasks, steps = 2 * 3 * 2, 3 // runs × sessions × turns; two calls then the answer
	if len(recs) != 2*tasks*steps {
		t.Fatalf("%d requests, want %d", len(recs), 2*tasks*steps)
	}
	type key struct {
		cell                  string
		run, session, turn, k int
	}
	ends := map[key]time.Time{}
	for _, r := range recs {
		ends[key{r.CellID, r.Run, r.Session, r.Turn, r.Step}] = r.Start.Add(r.BodyEnd)
	}
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || r.Err != nil || r.Step < 1 || r.Step > steps {
			t.Fatalf("%s: truth %v, error %v, step %d", r.ID, ok, r.Err, r.Step)
		}
		if r.PromptTokens != tr.PromptTokens || r.CachedTokens != tr.CachedTokens {
			t.Errorf("%s: prompt %d cached %d; the server counted %d and %d", r.ID, r.PromptTokens, r.CachedTokens, tr.PromptTokens, tr.CachedTokens)
		}
		if (r.Step < steps) != (tr.ToolCall != "") || r.ToolCalled() != (tr.ToolCall != "") {
			t.Errorf("%s: step %d called %v; the server called %q", r.ID, r.Step, r.ToolCalled(), tr.ToolCall)
		}
		if first := r.Step == 1 && r.Turn == 1; first != (tr.CachedTokens == 0) {
			t.Errorf("%s (turn %d step %d): %d cached: want the earlier steps' prompt served from the cache", r.ID, r.Turn, r.Step, tr.CachedTokens)
		}
		if r.Step == 1 {
			continue
		}
		// The tool's time lies after the last step was done with and before this one.
		prev, ok := ends[key{r.CellID, r.Run, r.Session, r.Turn, r.Step - 1}]
		if !ok || r.ToolWait < 30*time.Millisecond || r.Start.Sub(prev) < r.ToolWait {
			t.Errorf("%s: %v in tools, sent %v after the last step ended", r.ID, r.ToolWait, r.Start.Sub(prev))
		}
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, row := range res.Rows {
		if row.AgentTasks != tasks || row.AgentAnswered != tasks || row.AgentSteps.Mean != steps || len(row.AgentPerStep) != steps ||
			row.AgentToolTime.Min < 0.06 || !(row.AgentToolSharePct > 0 && row.AgentToolSharePct < 100) || !(row.AgentCacheHit.Min > 0) {
			t.Errorf("%s: %d tasks, %d answered, %v steps, %d step figures, tool time %+v, tool share %.1f%%, cache hit %+v", row.CellID,
				row.AgentTasks, row.AgentAnswered, row.AgentSteps.Mean, len(row.AgentPerStep), row.AgentToolTime, row.AgentToolSharePct, row.AgentCacheHit)
		}
		if row.Sessions == nil || row.Sessions.Completed != 3*2 {
			t.Errorf("%s: sessions %+v, want 6 completed", row.CellID, row.Sessions)
		}
	}
	rows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(rows) != 2 || rows[0].AgentTasks != tasks || math.Abs(rows[0].AgentToolSharePct-res.Rows[0].AgentToolSharePct) > 1e-5 {
		t.Fatalf("ledger: %d rows, %v", len(rows), err)
	}
	// summary.json holds each step's figures, valid against its schema.
	sum, err := os.ReadFile(filepath.Join(res.RunDir, ledger.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, ledger.SummarySchema, sum)
	var back struct {
		Sessions []ledger.SessionFigures `json:"sessions"`
	}
	if err := json.Unmarshal(sum, &back); err != nil || len(back.Sessions) != 2 || back.Sessions[0].AgentLoop == nil ||
		len(back.Sessions[0].AgentLoop.PerStep) != steps || back.Sessions[0].AgentLoop.PerStep[1].CachedTokensMean <= 0 {
		t.Errorf("summary.json sessions %+v (%v): want each row's agent loop with 3 steps, step 2's cached tokens", back.Sessions, err)
	}
	for _, col := range []string{"agent_tasks", "agent_mean_steps", "agent_tool_share_pct", "agent_cache_hit_p50_pct"} {
		if !slices.Contains(ledger.Header(), col) {
			t.Errorf("CSV header lacks %s", col)
		}
	}
}

// examples/agent-loop.hcl runs on the mock as its comment says.
func TestAgentLoopExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: 200 * time.Microsecond, ToolCalls: 3, PrefixCache: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/agent-loop.hcl", "url="+srv.URL+"/v1")
	res, _ := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows, want 2 backends", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Succeeded != r.Requests || r.AgentTasks != 16 || r.AgentAnswered != 16 || r.AgentSteps.Mean != 4 || !(r.AgentCacheHit.Min > 50) {
			t.Errorf("%s: %d/%d ok, %d tasks, %d answered, %v steps, cache hit %+v", r.CellID, r.Succeeded, r.Requests, r.AgentTasks, r.AgentAnswered, r.AgentSteps.Mean, r.AgentCacheHit)
		}
	}
}

// examples/agent-replay.hcl replays its SWE-agent trajectory on the mock, on OpenAI
// chat and Messages alike: every session sends the recording's four steps, each step's
// prompt and cached tokens are the server's, every later step finds the earlier steps'
// prompt in the cache, and each waits the recorded tool time before it.
func TestAgentReplayExample(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: 200 * time.Microsecond, PrefixCache: true, RecordTruth: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/agent-replay.hcl", "url="+srv.URL+"/v1")
	res, recs := runSamples(t, p, cells)
	recorded := []time.Duration{412 * time.Millisecond, 87 * time.Millisecond, 1934 * time.Millisecond} // the tool times before steps 2-4
	if len(recs) != 2*2*4*4 {
		t.Fatalf("%d requests, want 2 backends × 2 runs × 4 sessions × 4 steps", len(recs))
	}
	for _, r := range recs {
		tr, ok := mock.Truth(r.RequestID)
		if !ok || r.Err != nil || r.PromptTokens != tr.PromptTokens || r.CachedTokens != tr.CachedTokens {
			t.Fatalf("%s: truth %v, error %v, prompt %d cached %d; the server counted %d and %d", r.ID, ok, r.Err, r.PromptTokens, r.CachedTokens, tr.PromptTokens, tr.CachedTokens)
		}
		if (r.Step > 1) != (tr.CachedTokens > 0) {
			t.Errorf("%s (step %d): %d of %d prompt tokens cached", r.ID, r.Step, tr.CachedTokens, tr.PromptTokens)
		}
		if r.Step > 1 && r.ToolWait < recorded[r.Step-2] {
			t.Errorf("%s: %v in tools, less than the recorded %v", r.ID, r.ToolWait, recorded[r.Step-2])
		}
	}
	for _, row := range res.Rows {
		if row.AgentTasks != 8 || row.AgentAnswered != 8 || row.AgentSteps.Mean != 4 || row.AgentToolTime.Min < 2.433 || !(row.AgentCacheHit.Min > 50) {
			t.Errorf("%s: %d tasks (%d answered), %v steps, tool time %+v, cache hit %+v", row.CellID, row.AgentTasks, row.AgentAnswered, row.AgentSteps.Mean, row.AgentToolTime, row.AgentCacheHit)
		}
	}
}

// On Ollama's /api/chat the loop goes the same way: the calls go back as an assistant's
// tool_calls with object arguments and the results as tool messages by tool name, which
// the mock counts, so each turn takes its three steps.
func TestAgentLoopOllama(t *testing.T) {
	srv := mockserver.New(mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: 200 * time.Microsecond, ToolCalls: 2, RecordTruth: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	src := strings.NewReplacer(`backend "openai" "mock" { url = "${var.url}/v1" }`, `backend "ollama" "mock" { url = var.url }`,
		`backend "anthropic" "mock" { url = "${var.url}/v1" }`, "", "backend.openai.mock, backend.anthropic.mock", "backend.ollama.mock").Replace(agentPlan)
	p, cells := loadPlan(t, src, hs.URL)
	res, recs := runSamples(t, p, cells)
	if len(recs) != 2*3*2*3 || len(res.Rows) != 1 {
		t.Fatalf("%d requests, %d rows: want 36 requests (3 steps a turn), one row", len(recs), len(res.Rows))
	}
	for _, r := range recs {
		tr, ok := srv.Truth(r.RequestID)
		if !ok || r.Err != nil || (r.Step < 3) != (tr.ToolCall != "") || r.PromptTokens != tr.PromptTokens {
			t.Errorf("%s step %d: error %v, prompt %d; the server called %q, counted %d", r.ID, r.Step, r.Err, r.PromptTokens, tr.ToolCall, tr.PromptTokens)
		}
	}
	if row := res.Rows[0]; row.AgentTasks != 12 || row.AgentAnswered != 12 || row.AgentSteps.Mean != 3 {
		t.Errorf("%d tasks, %d answered, %v steps", row.AgentTasks, row.AgentAnswered, row.AgentSteps.Mean)
	}
}

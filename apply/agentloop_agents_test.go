package apply

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

// An agent loop shared by load agents runs as it does in one process: each session is
// dealt whole to one agent, so every step of a task (its tool results sent back into the
// same conversation) goes out from that agent; every step's prompt and cached tokens are
// what the mock counted; and the row's agent figures (tasks, answers, steps, each step's
// prompt and cached tokens) are those of the same plan run by one process, each against
// its own fresh mock so that neither run finds the other's prompts in the cache.
func TestAgentLoopAcrossLoadAgents(t *testing.T) {
	const agents = 2
	const tasks, steps = 2 * 3 * 2, 3 // runs × sessions × turns; two calls then the answer
	type runOut struct {
		rows []ledger.Row
		recs []ledger.RequestRecord
	}
	run := func(n int) runOut {
		srv := mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: 500 * time.Microsecond, ToolCalls: 2, PrefixCache: true, RecordTruth: true})
		hs := httptest.NewServer(srv)
		defer hs.Close()
		// Drawn tool times and result lengths: each agent must draw what one process
		// draws for the same session, turn and step.
		src := strings.NewReplacer("tool_latency_ms = 30", "tool_latency_ms = uniform(10, 30)",
			"result_tokens   = 12", "result_tokens   = uniform(4, 40)").Replace(agentPlan)
		if n > 1 {
			src = strings.Replace(src, "  warmup_runs   = 0\n", "  warmup_runs   = 0\n  agents        = 2\n", 1)
		}
		if strings.Count(src, "uniform(") != 2 || n > 1 && !strings.Contains(src, "agents        = 2") {
			t.Fatalf("the plan was not rewritten:\n%s", src)
		}
		p, cells := loadPlan(t, src, hs.URL)
		if got := cells[0].Workload.Agents; got != n && !(n == 1 && got == 0) {
			t.Fatalf("the plan's workload has %d agents, want %d", got, n)
		}
		res, err := Run(context.Background(), agentOptions(t, p, cells))
		if err != nil {
			t.Fatal(err)
		}
		var out runOut
		out.rows = res.Rows
		for _, r := range readSamples(t, res.RunDir) {
			if r.Warmup {
				continue
			}
			out.recs = append(out.recs, r)
			tr, ok := srv.Truth(r.RequestID)
			if !ok || r.Err != nil || r.Step < 1 || r.Step > steps {
				t.Fatalf("%d agents: %s: truth %v, error %v, step %d", n, r.ID, ok, r.Err, r.Step)
			}
			if r.PromptTokens != tr.PromptTokens || r.CachedTokens != tr.CachedTokens {
				t.Errorf("%d agents: %s: prompt %d cached %d; the server counted %d and %d", n, r.ID, r.PromptTokens, r.CachedTokens, tr.PromptTokens, tr.CachedTokens)
			}
			if (r.Step < steps) != (tr.ToolCall != "") {
				t.Errorf("%d agents: %s: step %d; the server called %q", n, r.ID, r.Step, tr.ToolCall)
			}
			if r.Step > 1 && r.ToolWait < 10*time.Millisecond {
				t.Errorf("%d agents: %s (step %d): %v in tools, less than the least latency drawn", n, r.ID, r.Step, r.ToolWait)
			}
			if first := r.Step == 1 && r.Turn == 1; first != (tr.CachedTokens == 0) {
				t.Errorf("%d agents: %s (turn %d step %d): %d cached: want the earlier steps' prompt served from the cache", n, r.ID, r.Turn, r.Step, tr.CachedTokens)
			}
		}
		if len(out.recs) != 2*tasks*steps || len(out.rows) != 2 {
			t.Fatalf("%d agents: %d requests, %d rows; want %d requests, 2 rows", n, len(out.recs), len(out.rows), 2*tasks*steps)
		}
		return out
	}
	one, shared := run(1), run(agents)

	// Every session's steps, all its turns', went out from one agent, and every agent
	// sent some.
	type sessionKey struct {
		cell         string
		run, session int
	}
	owner := map[sessionKey]int{}
	used := map[int]bool{}
	for _, r := range shared.recs {
		if r.Agent == nil {
			t.Fatalf("%s: no agent on a record of a shared level", r.ID)
		}
		k := sessionKey{r.CellID, r.Run, r.Session}
		if a, ok := owner[k]; ok && a != *r.Agent {
			t.Errorf("%s (session %d turn %d step %d) went out from agent %d, its session's earlier steps from agent %d", r.ID, r.Session, r.Turn, r.Step, *r.Agent, a)
		}
		owner[k] = *r.Agent
		used[*r.Agent] = true
	}
	if len(used) != agents {
		t.Errorf("requests went out from agents %v, want all %d", used, agents)
	}

	for i, row := range shared.rows {
		want := one.rows[i]
		if row.CellID != want.CellID || row.Agents != agents {
			t.Fatalf("row %d: cell %s with %d agents; the one-process run's row is %s", i, row.CellID, row.Agents, want.CellID)
		}
		if row.AgentTasks != tasks || row.AgentAnswered != tasks || row.AgentStepLimited != 0 || row.AgentFailed != 0 || row.AgentSteps.Mean != steps {
			t.Errorf("%s: %d tasks (%d answered, %d step-limited, %d failed), %v steps; want %d answered in %d steps", row.CellID,
				row.AgentTasks, row.AgentAnswered, row.AgentStepLimited, row.AgentFailed, row.AgentSteps.Mean, tasks, steps)
		}
		if row.AgentTasks != want.AgentTasks || row.AgentAnswered != want.AgentAnswered || row.AgentSteps.N != want.AgentSteps.N ||
			row.AgentSteps.Mean != want.AgentSteps.Mean || row.ToolCalls != want.ToolCalls || row.CachedTokens != want.CachedTokens ||
			row.CacheHitPct != want.CacheHitPct {
			t.Errorf("%s: shared by %d agents: %d tasks, %d answered, steps %+v, %d tool calls, %d cached tokens (%.3f%%); one process: %d, %d, %+v, %d, %d (%.3f%%)",
				row.CellID, agents, row.AgentTasks, row.AgentAnswered, row.AgentSteps, row.ToolCalls, row.CachedTokens, row.CacheHitPct,
				want.AgentTasks, want.AgentAnswered, want.AgentSteps, want.ToolCalls, want.CachedTokens, want.CacheHitPct)
		}
		if len(row.AgentPerStep) != steps || len(want.AgentPerStep) != steps {
			t.Fatalf("%s: %d step figures shared, %d in one process; want %d", row.CellID, len(row.AgentPerStep), len(want.AgentPerStep), steps)
		}
		for k, s := range row.AgentPerStep {
			w := want.AgentPerStep[k]
			t.Logf("%s step %d: %d requests, %.2f prompt and %.2f cached tokens (one process: %.2f and %.2f)", row.CellID, k+1,
				s.Requests, s.PromptTokensMean, s.CachedTokensMean, w.PromptTokensMean, w.CachedTokensMean)
			if s.Step != k+1 || s.Requests != tasks || s.Succeeded != tasks || s.Requests != w.Requests ||
				s.PromptTokensMean != w.PromptTokensMean || s.CachedTokensMean != w.CachedTokensMean || !(s.CachedTokensMean > 0) {
				t.Errorf("%s step %d: shared %d requests (%d ok), %.2f prompt and %.2f cached tokens; one process %d, %.2f and %.2f", row.CellID, k+1,
					s.Requests, s.Succeeded, s.PromptTokensMean, s.CachedTokensMean, w.Requests, w.PromptTokensMean, w.CachedTokensMean)
			}
		}
	}
}

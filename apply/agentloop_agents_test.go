package apply

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
)

// An agent loop shared by load agents runs as it does in one process: each session is
// dealt whole to one agent, so every step of a task (its tool results sent back into the
// same conversation) goes out from that agent; every step's prompt and cached tokens are
// what the mock counted; and the row's agent figures (tasks, answers, steps, each step's
// prompt and cached tokens) are those of the same plan run by one process, each against
// its own fresh mock so that neither run finds the other's prompts in the cache.
func TestAgentLoopAcrossLoadAgents(t *testing.T) {
	const tasks, steps = 2 * 3 * 2, 3 // runs × sessions × turns; two calls then the answer
	load := func(url string, agents int) (*plan.Plan, []*plan.Cell) {
		// Drawn tool times and result lengths: each agent must draw what one process
		// draws for the same session, turn and step.
		src := strings.NewReplacer("tool_latency_ms = 30", "tool_latency_ms = uniform(10, 30)",
			"result_tokens   = 12", "result_tokens   = uniform(4, 40)").Replace(agentPlan)
		src = withAgents(t, src, "  warmup_runs   = 0\n", agents)
		if strings.Count(src, "uniform(") != 2 {
			t.Fatalf("the plan was not rewritten:\n%s", src)
		}
		return loadPlan(t, src, url)
	}
	check := func(r ledger.RequestRecord, tr mockserver.Truth) {
		if (r.Step < steps) != (tr.ToolCall != "") {
			t.Errorf("%s: step %d; the server called %q", r.ID, r.Step, tr.ToolCall)
		}
		if r.Step > 1 && r.ToolWait < 10*time.Millisecond {
			t.Errorf("%s (step %d): %v in tools, less than the least latency drawn", r.ID, r.Step, r.ToolWait)
		}
		if first := r.Step == 1 && r.Turn == 1; first != (tr.CachedTokens == 0) {
			t.Errorf("%s (turn %d step %d): %d cached: want the earlier steps' prompt served from the cache", r.ID, r.Turn, r.Step, tr.CachedTokens)
		}
	}
	mock := mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: 500 * time.Microsecond, ToolCalls: 2, PrefixCache: true, RecordTruth: true}
	compareAgentLoops(t, mock, load, check, tasks, steps)
}

// The same on Ollama's /api/chat (tool calls back as an assistant's tool_calls, results
// as tool messages by name): Ollama reports no cached tokens, so the mock keeps no cache.
func TestAgentLoopOllamaAcrossLoadAgents(t *testing.T) {
	const tasks, steps = 2 * 3 * 2, 3
	load := func(url string, agents int) (*plan.Plan, []*plan.Cell) {
		src := strings.NewReplacer(`backend "openai" "mock" { url = "${var.url}/v1" }`, `backend "ollama" "mock" { url = var.url }`,
			`backend "anthropic" "mock" { url = "${var.url}/v1" }`, "", "backend.openai.mock, backend.anthropic.mock", "backend.ollama.mock",
			"tool_latency_ms = 30", "tool_latency_ms = uniform(10, 30)", "result_tokens   = 12", "result_tokens   = uniform(4, 40)").Replace(agentPlan)
		src = withAgents(t, src, "  warmup_runs   = 0\n", agents)
		if !strings.Contains(src, "backend.ollama.mock") || strings.Count(src, "uniform(") != 2 {
			t.Fatalf("the plan was not rewritten:\n%s", src)
		}
		return loadPlan(t, src, url)
	}
	check := func(r ledger.RequestRecord, tr mockserver.Truth) {
		if (r.Step < steps) != (tr.ToolCall != "") {
			t.Errorf("%s: step %d; the server called %q", r.ID, r.Step, tr.ToolCall)
		}
		if r.Step > 1 && r.ToolWait < 10*time.Millisecond {
			t.Errorf("%s (step %d): %v in tools, less than the least latency drawn", r.ID, r.Step, r.ToolWait)
		}
	}
	mock := mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: 500 * time.Microsecond, ToolCalls: 2, RecordTruth: true}
	compareAgentLoops(t, mock, load, check, tasks, steps)
}

// A recorded agent's replay (examples/agent-replay.hcl's SWE-agent trajectory) shared by
// load agents: every session's four steps go out from one agent, each waits its recorded
// tool time, and the rows' agent figures are the one process's.
func TestAgentReplayAcrossLoadAgents(t *testing.T) {
	const tasks, steps = 4, 4 // one run's four sessions; the recording's four calls
	example, err := os.ReadFile("../examples/agent-replay.hcl")
	if err != nil {
		t.Fatal(err)
	}
	traj, err := os.ReadFile("../examples/data/swe-agent/fix-parse-date.traj")
	if err != nil {
		t.Fatal(err)
	}
	load := func(url string, agents int) (*plan.Plan, []*plan.Cell) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "data", "swe-agent"), 0o755); err != nil {
			t.Fatal(err)
		}
		src := withAgents(t, strings.Replace(string(example), "repeat_runs = 2", "repeat_runs = 1", 1), "  warmup_runs = 0\n", agents)
		if err := os.WriteFile(filepath.Join(dir, "data", "swe-agent", "fix-parse-date.traj"), traj, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "plan.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return loadPlanFile(t, filepath.Join(dir, "plan.hcl"), "url="+url+"/v1")
	}
	recorded := []time.Duration{412 * time.Millisecond, 87 * time.Millisecond, 1934 * time.Millisecond} // the tool times before steps 2-4
	check := func(r ledger.RequestRecord, tr mockserver.Truth) {
		if (r.Step > 1) != (tr.CachedTokens > 0) {
			t.Errorf("%s (step %d): %d of %d prompt tokens cached", r.ID, r.Step, tr.CachedTokens, tr.PromptTokens)
		}
		if r.Step > 1 && r.ToolWait < recorded[r.Step-2] {
			t.Errorf("%s: %v in tools, less than the recorded %v", r.ID, r.ToolWait, recorded[r.Step-2])
		}
	}
	mock := mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: 200 * time.Microsecond, PrefixCache: true, RecordTruth: true}
	compareAgentLoops(t, mock, load, check, tasks, steps)
}

// withAgents is the plan src with agents = n (n > 1) added after the workload's line
// after, which must be there.
func withAgents(t *testing.T, src, after string, n int) string {
	t.Helper()
	if n <= 1 {
		return src
	}
	if strings.Count(src, after) != 1 {
		t.Fatalf("the plan has not one %q to add agents after", after)
	}
	return strings.Replace(src, after, after+"  agents = "+strconv.Itoa(n)+"\n", 1)
}

// compareAgentLoops runs the plan load gives, of two cells whose every task answers
// in steps steps (tasks a row), from one process and from two load agents, each
// against its own mock: every record of both must be what the mock counted (prompt and
// cached tokens; check holds it to the plan's own truths), every session of the
// shared run must go out from one agent and every agent send some, and the shared
// rows' agent figures must equal the one process's.
func compareAgentLoops(t *testing.T, mock mockserver.Config, load func(url string, agents int) (*plan.Plan, []*plan.Cell),
	check func(ledger.RequestRecord, mockserver.Truth), tasks, steps int) {
	t.Helper()
	const agents = 2
	type runOut struct {
		rows []ledger.Row
		recs []ledger.RequestRecord
	}
	nCells := 0
	run := func(n int) runOut {
		srv := mockserver.New(mock)
		hs := httptest.NewServer(srv)
		defer hs.Close()
		p, cells := load(hs.URL, n)
		if got := max(cells[0].Workload.Agents, 1); got != n {
			t.Fatalf("the plan's workload has %d agents, want %d", got, n)
		}
		res, err := Run(context.Background(), agentOptions(t, p, cells))
		if err != nil {
			t.Fatal(err)
		}
		out := runOut{rows: res.Rows}
		nCells = len(cells)
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
			check(r, tr)
		}
		if len(out.recs) != nCells*tasks*steps || len(out.rows) != nCells {
			t.Fatalf("%d agents: %d requests, %d rows; want %d requests, %d rows", n, len(out.recs), len(out.rows), nCells*tasks*steps, nCells)
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
		if row.AgentTasks != tasks || row.AgentAnswered != tasks || row.AgentStepLimited != 0 || row.AgentFailed != 0 || row.AgentSteps.Mean != float64(steps) {
			t.Errorf("%s: %d tasks (%d answered, %d step-limited, %d failed), %v steps; want %d answered in %d steps", row.CellID,
				row.AgentTasks, row.AgentAnswered, row.AgentStepLimited, row.AgentFailed, row.AgentSteps.Mean, tasks, steps)
		}
		if row.AgentTasks != want.AgentTasks || row.AgentAnswered != want.AgentAnswered || row.AgentSteps.N != want.AgentSteps.N ||
			row.AgentSteps.Mean != want.AgentSteps.Mean || row.ToolCalls != want.ToolCalls || row.CachedTokens != want.CachedTokens ||
			!same(row.CacheHitPct, want.CacheHitPct) {
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
				s.PromptTokensMean != w.PromptTokensMean || s.CachedTokensMean != w.CachedTokensMean || (mock.PrefixCache && !(s.CachedTokensMean > 0 || k == 0)) {
				t.Errorf("%s step %d: shared %d requests (%d ok), %.2f prompt and %.2f cached tokens; one process %d, %.2f and %.2f", row.CellID, k+1,
					s.Requests, s.Succeeded, s.PromptTokensMean, s.CachedTokensMean, w.Requests, w.PromptTokensMean, w.CachedTokensMean)
			}
		}
	}
}

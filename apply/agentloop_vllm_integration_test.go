package apply

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/gatewaytest"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
)

const vllmAgentPlan = `
variable "url" { type = string }
backend "openai" "vllm" { url = "${var.url}/v1" }
backend "anthropic" "vllm" { url = "${var.url}/v1" }
workload "agent" {
  prompt_tokens = 140
  max_tokens    = 96
  temperature   = 0
  concurrency   = [1]
  warmup_runs   = 0
  repeat_runs   = 1
  tool "get_weather" {
    parameters = {
      type       = "object"
      properties = { city = { type = "string", maxLength = 12 } }
      required   = ["city"]
    }
  }
  tool_choice = "required"
  session {
    turns    = 1
    sessions = 2
    agent {
      max_steps       = 3
      tool_latency_ms = 5
      result_tokens   = 16
    }
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm, backend.anthropic.vllm]
  workload = [workload.agent]
  model_id = "tiny"
}
`

// On the real vLLM, tool_choice "required" forces every step of the random model to
// call the tool (guided decoding; vLLM 0.32 takes it only with a tool parser loaded), so
// each task runs to max_steps and the step limit ends it. Each later step carries the
// calls and the results in the protocol's shape (OpenAI chat's tool messages, the
// Messages API's tool_result blocks), which vLLM takes, its prompt grows by them, and
// every step's cached tokens are what vLLM's own usage said, read from the raw stream
// through a tap. (The random model's guided call is often cut by max_tokens: its
// arguments are not checked here.)
func TestRealVLLMAgentLoop(t *testing.T) {
	s := vllmtest.SharedAgentic(t)
	tap := gatewaytest.NewTap(t, s.URL)
	p, cells := loadPlan(t, vllmAgentPlan, tap.URL)
	res, recs := runSamples(t, p, cells)
	for _, r := range recs {
		t.Logf("%s %s step %d: prompt %d cached %d, output %d (%s), ttft %v e2e %v, %d calls, tool wait %v, limit %v, error %v", r.CellID, r.ID, r.Step,
			r.PromptTokens, r.CachedTokens, r.OutputTokens, r.FinishReason, r.FirstToken, r.End, len(r.ToolCalls), r.ToolWait, r.StepLimit, r.Err)
	}
	if len(recs) != 2*2*3 {
		t.Fatalf("%d requests, want 2 backends × 2 sessions × 3 steps", len(recs))
	}
	// The server's own figures, by response id: its usage's cached tokens, and whether
	// the request carried tools' results in its protocol's shape.
	type served struct {
		cached  int
		results bool
	}
	byID := map[string]served{}
	idRe := regexp.MustCompile(`"id":"([^"]+)"`)
	cachedRe := regexp.MustCompile(`"(?:cached_tokens|cache_read_input_tokens)":(\d+)`)
	for _, ex := range tap.Exchanges() {
		id := idRe.FindSubmatch(ex.Response)
		if id == nil || !strings.Contains(ex.Path, "/v1/") {
			continue
		}
		sv := served{results: bytes.Contains(ex.Body, []byte(`"tool_call_id"`)) || bytes.Contains(ex.Body, []byte(`"tool_result"`))}
		if all := cachedRe.FindAllSubmatch(ex.Response, -1); len(all) > 0 {
			sv.cached, _ = strconv.Atoi(string(all[len(all)-1][1]))
		}
		byID[string(id[1])] = sv
	}
	prompt := map[string]int{}
	for _, r := range recs {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.ID, r.Err)
		}
		sv, ok := byID[r.ResponseID]
		if !ok || r.CachedTokens != sv.cached || sv.results != (r.Step > 1) {
			t.Errorf("%s (step %d): cached %d; the server said %d (found %v), tools' results sent %v", r.ID, r.Step, r.CachedTokens, sv.cached, ok, sv.results)
		}
		if !r.ToolCalled() || r.ToolCalls[0].Name != "get_weather" {
			t.Errorf("%s: calls %+v, want a forced call of get_weather", r.ID, r.ToolCalls)
		}
		if r.StepLimit != (r.Step == 3) {
			t.Errorf("%s: step %d, step limit %v", r.ID, r.Step, r.StepLimit)
		}
		task := r.CellID + "/" + strings.Split(r.ID, "/step")[0]
		if r.Step > 1 && r.PromptTokens <= prompt[task] {
			t.Errorf("%s: step %d's prompt %d tokens, no longer than the last step's %d", r.ID, r.Step, r.PromptTokens, prompt[task])
		}
		prompt[task] = r.PromptTokens
	}
	for _, row := range res.Rows {
		if row.AgentTasks != 2 || row.AgentStepLimited != 2 || row.AgentSteps.Mean != 3 {
			t.Errorf("%s: %d tasks, %d step-limited, %v steps", row.CellID, row.AgentTasks, row.AgentStepLimited, row.AgentSteps.Mean)
		}
	}
}

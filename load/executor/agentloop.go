package executor

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
)

// AgentSpec drives each turn of a session by the model's tool calls: an agent loop.
// A turn's first step sends the turn's prompt; while the answer calls a tool and the
// turn has steps left, planrun answers every call with a tool result after a tool
// latency, appends the assistant's calls and the results to the conversation (each
// adapter writes them in its protocol's shape), and sends the next step. The turn
// ends at an answer without a call, or at MaxSteps.
type AgentSpec struct {
	// MaxSteps is the most requests of one turn (at least 1).
	MaxSteps int
	// ToolLatencyMs is the time a tool takes, in ms, drawn per call (a step waits for
	// its slowest call, as an agent running its calls at once does); zero Kind: none.
	ToolLatencyMs dataset.Length
	// ResultTokens is a generated tool result's length in tokens, drawn per call.
	ResultTokens dataset.Length
	// Results, when set, are the tool results drawn from instead: a call gets one of
	// those for its tool (or for no tool in particular).
	Results []ToolResult
	// Seed makes the draws repeatable: one stream per session, turn and step, whatever
	// order the sessions run in.
	Seed uint64
	// Tasks, when set, are recorded tasks replayed in place of the model's own calls
	// (AgentTask): session i of a run replays task i mod len(Tasks) as its one turn.
	Tasks []AgentTask `json:",omitempty"`
}

// ToolResult is a tool's answer taken from a dataset: for calls of Tool ("" for any
// tool), Content.
type ToolResult struct {
	Tool    string `json:"tool,omitempty"`
	Content string `json:"content"`
}

// agentStep is what an agent loop adds to one request of its turn: its step (from 1) and
// the time the turn spent in tools just before it.
type agentStep struct {
	step     int
	toolWait time.Duration
	// limit is set on a step that ended its turn by the step limit with a call unanswered.
	limit bool
}

// agentTurn runs turn t of a session as an agent loop, from its first step's answer s:
// it answers each tool call and sends the next step until an answer without a call,
// MaxSteps, a failed step, or ctx is done. It returns the turn's last answer, with the
// history to carry into the session's next turn.
func agentTurn(ctx context.Context, clk backends.Clock, sp *SessionSpec, n int, t *turn, s backends.Sample,
	send func(paced, *turn, slotted) backends.Sample) (last backends.Sample, history []backends.Message, ok bool) {
	a := sp.Agent
	history = append(t.history, backends.Message{Role: backends.RoleUser, Content: t.prompt})
	for step := 1; ; step++ {
		if !s.OK() || !s.ToolCalled() || step >= a.MaxSteps || ctx.Err() != nil {
			return s, append(history, backends.Message{Role: backends.RoleAssistant, Content: s.Text}), s.OK()
		}
		at := len(history)
		history = append(history, backends.Message{Role: backends.RoleAssistant, Content: s.Text, ToolCalls: s.ToolCalls})
		began := clk.Now()
		results, pause := a.answer(t, step, s.ToolCalls, at)
		if !wait(ctx, clk, pause) {
			return s, history, false
		}
		history = append(history, results...)
		next := &turn{session: t.session, turn: t.turn, history: history, keepText: true, carried: carriedBy(s),
			agent: &agentStep{step: step + 1, toolWait: clk.Now().Sub(began)}}
		if step+1 == a.MaxSteps {
			next.agent.limit = true // the turn ends here, called tool or not
		}
		s = send(paced{n: n}, next, slotted{})
	}
}

// answer makes the results of calls (the assistant message at index at) for step of
// turn t, and the time the tools take: the slowest call's drawn latency.
func (a *AgentSpec) answer(t *turn, step int, calls []backends.ToolCall, at int) ([]backends.Message, time.Duration) {
	rng := rand.New(rand.NewPCG(a.Seed, uint64(t.session)<<40|uint64(t.turn)<<20|uint64(step)))
	var wait time.Duration
	out := make([]backends.Message, len(calls))
	for i := range calls {
		tc := &calls[i]
		if a.ToolLatencyMs.Kind != "" {
			wait = max(wait, time.Duration(a.ToolLatencyMs.Draw(rng, 0))*time.Millisecond)
		}
		out[i] = backends.Message{Role: backends.RoleTool, ToolCallID: tc.CallID(at), ToolName: tc.Name,
			Content: a.result(rng, t, step, i, tc.Name)}
	}
	return out, wait
}

// result is the text of a call's result: one of Results for its tool, or filler of a
// drawn length behind a marker unique to the call (a fresh tool output is nothing a
// prefix cache has seen).
func (a *AgentSpec) result(rng *rand.Rand, t *turn, step, call int, tool string) string {
	if len(a.Results) > 0 {
		var fit []int
		for i, r := range a.Results {
			if r.Tool == "" || r.Tool == tool {
				fit = append(fit, i)
			}
		}
		if len(fit) > 0 {
			return a.Results[fit[rng.IntN(len(fit))]].Content
		}
	}
	n := 1
	if a.ResultTokens.Kind != "" {
		n = a.ResultTokens.Draw(rng, 0)
	}
	id := "s" + strconv.Itoa(t.session) + "/t" + strconv.Itoa(t.turn) + "/step" + strconv.Itoa(step) + "/call" + strconv.Itoa(call)
	if t.prompts == nil {
		return fillerResult(id, n)
	}
	return t.prompts.Shaped(id, Shape{PromptTokens: n})
}

// fillerResult is a result of n filler words behind its id, for a level without
// Prompts (a test's).
func fillerResult(id string, n int) string {
	p := Prompts{}
	return p.prefixed(id, p.words(n, 0))
}

// carriedBy is the tokens of the conversation an answer s leaves for the next request of
// its session as the server counted them: its prompt and answer; -1 when it counted none
// (the next one's new prompt cannot be told apart).
func carriedBy(s backends.Sample) int {
	if s.PromptTokens == 0 {
		return -1
	}
	return s.PromptTokens + s.OutputTokens
}

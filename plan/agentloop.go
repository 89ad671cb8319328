package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
)

// AgentLoop is a session block's `agent` block: each turn of the session is driven by
// the model's tool calls. planrun answers every call with a tool result after a tool
// latency and sends the next step, until an answer without a call or MaxSteps.
type AgentLoop struct {
	// MaxSteps is the most requests of one turn (at least 1).
	MaxSteps int
	// ToolLatencyMs is a tool's latency in ms: a number or a length function's draw;
	// zero Kind: none.
	ToolLatencyMs dataset.Length
	// ResultTokens is a generated result's length in tokens (default 64).
	ResultTokens dataset.Length
	// Results are the results_file's: a call gets one for its tool (or for any tool).
	Results []ToolResult
	// Trajectories are the recorded tasks a replay sends in place of the model's own
	// calls (SWE-agent .traj files: dataset.ReadTrajectory), matched by the trajectories
	// glob, in name order; session i of a run replays file i mod their number.
	Trajectories []string
	DeclRange    hcl.Range
}

// ToolResult is one line of an agent block's results_file: a tool's answer, for calls
// of Tool ("" for any tool).
type ToolResult struct {
	Tool    string `json:"tool"`
	Content string `json:"content"`
}

// defaultResultTokens is a generated tool result's length when the plan gives none.
const defaultResultTokens = 64

var agentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "max_steps", Required: true}, {Name: "tool_latency_ms"},
		{Name: "result_tokens"}, {Name: "results_file"}, {Name: "trajectories"}},
}

// decodeAgentLoop reads a session block's agent block, if any, and refuses a loop that
// cannot run: one whose workload offers no tool, or forbids calling one.
func (l *loader) decodeAgentLoop(w *Workload, s *Session, blocks hcl.Blocks, ctx *hcl.EvalContext) {
	if len(blocks) == 0 {
		return
	}
	for _, dup := range blocks[1:] {
		l.errorf(dup.DefRange.Ptr(), "Duplicate agent block", "A session has one agent block; the first is at %s.", blocks[0].DefRange)
	}
	b := blocks[0]
	ag := &AgentLoop{DeclRange: b.DefRange, ResultTokens: dataset.Fixed(defaultResultTokens)}
	content, diags := b.Body.Content(agentSchema)
	l.add(diags)
	a := content.Attributes
	if m := a["max_steps"]; m != nil && l.decode(m, ctx, &ag.MaxSteps) && ag.MaxSteps < 1 {
		l.errorf(m.Expr.Range().Ptr(), "Invalid max_steps", "max_steps is the most requests of one turn, at least 1, not %d.", ag.MaxSteps)
	}
	l.decodeDrawn(a["tool_latency_ms"], ctx, &ag.ToolLatencyMs, "milliseconds")
	l.decodeDrawn(a["result_tokens"], ctx, &ag.ResultTokens, "tokens")
	for _, at := range []*hcl.Attribute{a["tool_latency_ms"], a["result_tokens"]} {
		if at != nil && (ag.ToolLatencyMs.Kind == dataset.LengthDataset || ag.ResultTokens.Kind == dataset.LengthDataset) {
			l.errorf(at.Expr.Range().Ptr(), "Invalid "+at.Name, "%s is a number or a length function's draw: an agent loop's tool has no dataset row to take it from.", at.Name)
			break
		}
	}
	if f := a["results_file"]; f != nil {
		if r := a["result_tokens"]; r != nil {
			l.errorf(f.NameRange.Ptr(), "Conflicting arguments", "Give result_tokens or results_file, not both (result_tokens is at %s): a result is generated to a length or taken from the file.", r.NameRange)
		}
		ag.Results = l.toolResults(f, ctx, w)
	}
	if tr := a["trajectories"]; tr != nil {
		ag.Trajectories = l.trajectories(tr, ctx, a, s)
		s.Agent = ag
		return // the recording drives the steps: no tool need be offered
	}
	switch {
	case len(w.Tools.Tools) == 0:
		l.errorf(b.DefRange.Ptr(), "Agent loop without tools", "An agent loop goes on while the model calls a tool, and workload %q offers none: add tool \"<name>\" { parameters = { ... } } to it.", w.Name)
	case w.Tools.Choice == backends.ToolChoiceNone:
		l.errorf(b.DefRange.Ptr(), "Agent loop without tool calls", "tool_choice = \"none\" forbids the calls an agent loop answers: leave it out, or make it \"auto\", \"required\" or a tool's name.")
	}
	s.Agent = ag
}

// toolResults reads a results_file: JSON Lines of {"tool": "<name>", "content": "<text>"}
// (tool optional). A line that is not one, or names a tool the workload does not
// offer, is an error naming its line.
func (l *loader) toolResults(f *hcl.Attribute, ctx *hcl.EvalContext, w *Workload) []ToolResult {
	var path string
	if !l.decode(f, ctx, &path) {
		return nil
	}
	raw, err := os.ReadFile(l.resolvePath(path))
	if err != nil {
		l.errorf(f.Expr.Range().Ptr(), "Cannot read results_file", "%v", err)
		return nil
	}
	names := make([]string, len(w.Tools.Tools))
	for i, t := range w.Tools.Tools {
		names[i] = t.Name
	}
	var out []ToolResult
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r ToolResult
		why := ""
		switch err := json.Unmarshal(line, &r); {
		case err != nil:
			why = jsonLineProblem(err) + "."
		case r.Content == "":
			why = `it has no "content".`
		case r.Tool != "" && len(names) > 0 && !slices.Contains(names, r.Tool):
			why = fmt.Sprintf("the workload offers no tool %q.%s", r.Tool, suggestion(r.Tool, names))
		}
		if why != "" {
			l.errorf(f.Expr.Range().Ptr(), "Invalid results_file", "%s line %d: %s Each line is {\"tool\": \"<name>\", \"content\": \"<text>\"}, tool optional.", path, n, why)
			return nil
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		l.errorf(f.Expr.Range().Ptr(), "Empty results_file", "%s holds no result: each line is {\"tool\": \"<name>\", \"content\": \"<text>\"}.", path)
	}
	return out
}

// trajectories reads an agent block's trajectories glob (relative to the plan) and
// checks each file is a SWE-agent trajectory planrun can replay. A replay's steps and
// tool times are the recording's, so a generated result or latency beside it is refused,
// and so is more than one turn (a recorded task is the session's one turn).
func (l *loader) trajectories(tr *hcl.Attribute, ctx *hcl.EvalContext, a hcl.Attributes, s *Session) []string {
	for _, n := range []string{"tool_latency_ms", "result_tokens", "results_file"} {
		if c := a[n]; c != nil {
			l.errorf(c.NameRange.Ptr(), "Conflicting arguments", "%s cannot go with trajectories (at %s): a replayed task's steps, results and tool times are the recording's.", n, tr.NameRange)
		}
	}
	if s.Turns > 1 {
		l.errorf(tr.NameRange.Ptr(), "Replay of more than one turn", "A replayed trajectory is its session's one turn: set turns = 1 in the session block (it is %d).", s.Turns)
	}
	var glob string
	if !l.decode(tr, ctx, &glob) {
		return nil
	}
	paths, err := filepath.Glob(l.resolvePath(glob))
	if err != nil || len(paths) == 0 {
		l.errorf(tr.Expr.Range().Ptr(), "No trajectories", "trajectories = %q matches no file (relative to the plan): it names SWE-agent .traj files.", glob)
		return nil
	}
	for _, p := range paths {
		if _, err := dataset.ReadTrajectory(p); err != nil {
			l.errorf(tr.Expr.Range().Ptr(), "Invalid trajectory", "%v.", err)
			return nil
		}
	}
	return paths
}

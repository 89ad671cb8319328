package executor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/planrun/planrun/backends"
)

// AgentTask is a recorded agent task replayed step by step (AgentSpec.Tasks): each
// step sends the messages the recorded agent sent, whatever the model answers (its
// answer is measured, and left out of what follows), and the next step waits the time
// the recorded tool ran.
type AgentTask struct {
	// Name says where the task came from (its trace file), for the request log.
	Name  string
	Steps []AgentTaskStep
}

// AgentTaskStep is one recorded model call: the conversation it sent, and the time its
// tool then ran before the next call.
type AgentTaskStep struct {
	Messages []backends.Message
	ToolTime time.Duration
}

// replayTask runs session i (from 0) as recorded task i of sp.Agent.Tasks (round
// robin), up to MaxSteps steps; a failed step ends it.
func replayTask(ctx context.Context, clk backends.Clock, sp *SessionSpec, prompts *Prompts, i int, send func(paced, *turn, slotted) backends.Sample) {
	a := sp.Agent
	task := a.Tasks[i%len(a.Tasks)]
	n := min(len(task.Steps), a.MaxSteps)
	var inTools time.Duration
	for k := range n {
		if k > 0 {
			began := clk.Now()
			if !wait(ctx, clk, task.Steps[k-1].ToolTime) {
				return
			}
			inTools = clk.Now().Sub(began)
		}
		if ctx.Err() != nil {
			return
		}
		t := &turn{session: i + 1, turn: 1, recorded: task.Steps[k].Messages, prompts: prompts,
			agent: &agentStep{step: k + 1, toolWait: inTools, limit: k+1 == n && n < len(task.Steps)}}
		if s := send(paced{n: i * sp.Turns}, t, slotted{}); !s.OK() {
			return
		}
	}
}

// marked is msgs with the marker of request id (a session's first step's: the same for
// its every step) in front of the first message, so sessions replaying one task, and
// runs replaying it again, share no prefix a server's cache could serve across them;
// within a session each step's conversation is the last one's and more, as recorded.
func marked(prompts *Prompts, id string, msgs []backends.Message) []backends.Message {
	if prompts == nil || len(msgs) == 0 {
		return msgs
	}
	out := append([]backends.Message(nil), msgs...)
	out[0].Content = prompts.Shaped(id, Shape{Text: out[0].Content})
	return out
}

// applyRecorded puts a recorded step's conversation on req, marked for the session's
// request id: its last message, a user's, as the prompt, or (a tool's result last) the
// whole as history with no prompt.
func (t *turn) applyRecorded(req *backends.Request, id string) {
	msgs := marked(t.prompts, id, t.recorded)
	last := msgs[len(msgs)-1]
	if last.Role == backends.RoleUser {
		req.History, req.Prompt = msgs[:len(msgs)-1], last.Content
	} else {
		req.History, req.Prompt = msgs, ""
	}
}

// A replayed task travels to load agents as JSON (LevelSpec), and a Message keeps its
// tool parts out of JSON (each adapter writes them in its own shape): a step is written
// with them whole.
type wireMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
}

type wireCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name"`
	Args     string `json:"args"`
	ArgsJSON bool   `json:"args_json,omitempty"`
}

type wireStep struct {
	Messages []wireMessage `json:"messages"`
	ToolTime time.Duration `json:"tool_time_ns"`
}

// MarshalJSON writes the step with its messages' tool calls and results.
func (s AgentTaskStep) MarshalJSON() ([]byte, error) {
	w := wireStep{ToolTime: s.ToolTime, Messages: make([]wireMessage, len(s.Messages))}
	for i, m := range s.Messages {
		w.Messages[i] = wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName}
		for _, c := range m.ToolCalls {
			w.Messages[i].ToolCalls = append(w.Messages[i].ToolCalls, wireCall{c.Index, c.ID, c.Name, c.Args, c.ArgsJSON})
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a step MarshalJSON wrote.
func (s *AgentTaskStep) UnmarshalJSON(b []byte) error {
	var w wireStep
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	s.ToolTime, s.Messages = w.ToolTime, make([]backends.Message, len(w.Messages))
	for i, m := range w.Messages {
		s.Messages[i] = backends.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName}
		for _, c := range m.ToolCalls {
			s.Messages[i].ToolCalls = append(s.Messages[i].ToolCalls, backends.ToolCall{Index: c.Index, ID: c.ID, Name: c.Name, Args: c.Args, ArgsJSON: c.ArgsJSON})
		}
	}
	return nil
}

package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// Trajectory is one agent task as SWE-agent recorded it: a .traj file, documented at
// https://swe-agent.com/latest/usage/trajectories/ (the types are TrajectoryStep and
// HistoryItem in SWE-agent's sweagent/types.py). Its "trajectory" holds a step per model
// call: "query", the messages the model was shown, and "execution_time", the seconds
// its action (the tool call) then ran; its "history" holds the whole conversation, with
// the assistant's tool_calls and the tool role results under their tool_call_ids, from
// which a step's messages are taken when it has no query.
type Trajectory struct {
	// Path is the file it was read from.
	Path string
	// Steps are the model calls, in order.
	Steps []TrajectoryStep
}

// TrajectoryStep is one model call of a Trajectory: the messages it sent, and the time
// the tool it called ran before the next call.
type TrajectoryStep struct {
	Messages []TraceMessage
	ToolTime time.Duration
}

// TraceMessage is a recorded chat message: a system, user or assistant message (the
// assistant's with its tool calls), or a tool's result under its call's id.
type TraceMessage struct {
	Role, Content string
	ToolCalls     []TraceCall
	ToolCallID    string
}

// TraceCall is a recorded tool call: its id, the function's name, and its arguments'
// JSON text.
type TraceCall struct {
	ID, Name, Args string
}

// sweMessage is a query or history message as SWE-agent writes it: content a string or
// a list of {type, text} blocks; tool_calls in OpenAI's shape.
type sweMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	IsDemo    bool            `json:"is_demo"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallIDs []string `json:"tool_call_ids"`
}

type sweTrajectory struct {
	Trajectory []struct {
		Query         []sweMessage `json:"query"`
		ExecutionTime float64      `json:"execution_time"`
	} `json:"trajectory"`
	History []sweMessage `json:"history"`
}

// ReadTrajectory reads a SWE-agent .traj file. A step without a query sends the history
// up to the assistant message that answered it (demonstrations left out).
func ReadTrajectory(path string) (*Trajectory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw sweTrajectory
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s is no SWE-agent trajectory: %v", path, err)
	}
	if len(raw.Trajectory) == 0 {
		return nil, fmt.Errorf(`%s has no steps: a SWE-agent trajectory's "trajectory" lists them`, path)
	}
	history := traceMessages(raw.History)
	var answers []int // the history's assistant messages: where each step's prompt ends
	for i, m := range history {
		if m.Role == "assistant" {
			answers = append(answers, i)
		}
	}
	t := &Trajectory{Path: path}
	for k, st := range raw.Trajectory {
		msgs := traceMessages(st.Query)
		if len(msgs) == 0 && k < len(answers) {
			msgs = history[:answers[k]]
		}
		if len(msgs) == 0 {
			return nil, fmt.Errorf("%s: step %d has no query, and the history no assistant message %d to end one", path, k+1, k+1)
		}
		if last := msgs[len(msgs)-1]; last.Role != "user" && last.Role != "tool" {
			return nil, fmt.Errorf("%s: step %d's messages end in a %s message: a model call answers a user's or a tool's", path, k+1, last.Role)
		}
		t.Steps = append(t.Steps, TrajectoryStep{Messages: msgs, ToolTime: time.Duration(math.Round(st.ExecutionTime * float64(time.Second)))})
	}
	return t, nil
}

// traceMessages are SWE-agent's messages as TraceMessages, demonstrations left out.
func traceMessages(in []sweMessage) []TraceMessage {
	out := make([]TraceMessage, 0, len(in))
	for _, m := range in {
		if m.IsDemo {
			continue
		}
		tm := TraceMessage{Role: m.Role, Content: sweContent(m.Content)}
		for _, c := range m.ToolCalls {
			tm.ToolCalls = append(tm.ToolCalls, TraceCall{ID: c.ID, Name: c.Function.Name, Args: sweArgs(c.Function.Arguments)})
		}
		if len(m.ToolCallIDs) > 0 {
			tm.ToolCallID = m.ToolCallIDs[0]
		}
		out = append(out, tm)
	}
	return out
}

// sweContent is a message's text: the string, or its text blocks joined.
func sweContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	texts := make([]string, len(blocks))
	for i, b := range blocks {
		texts[i] = b.Text
	}
	return strings.Join(texts, "\n")
}

// sweArgs is a call's arguments as JSON text: OpenAI's string, or an object as it is.
func sweArgs(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

package backends

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/planrun/planrun/internal/jsonscan"
	"github.com/planrun/planrun/internal/jsonschema"
)

// Tool is a function a request offers the model: its name, what it does, and the JSON
// Schema of its arguments. Adapters send it in their protocol's shape (OpenAI's
// tools[].function, the Messages API's input_schema, Ollama's tools).
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments (an object schema); nil sends an
	// empty object schema.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// FunctionTool is a tool in the shape OpenAI's chat API and Ollama's /api/chat take:
// {"type":"function","function":{name, description, parameters}}.
type FunctionTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// FunctionTools are tools in FunctionTool's shape; a tool without parameters gets an
// empty object schema.
func FunctionTools(tools []Tool) []FunctionTool {
	ts := make([]FunctionTool, len(tools))
	for i, t := range tools {
		ts[i].Type = "function"
		ts[i].Function.Name, ts[i].Function.Description, ts[i].Function.Parameters = t.Name, t.Description, t.Parameters
		if ts[i].Function.Parameters == nil {
			ts[i].Function.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
		}
	}
	return ts
}

// The tool choices a request can make besides naming a tool (Request.ToolChoice).
const (
	ToolChoiceAuto     = "auto"     // the model decides
	ToolChoiceRequired = "required" // the model must call some tool (the Messages API's "any")
	ToolChoiceNone     = "none"     // the model must not call one
)

// ToolPart is one stream event's part of a tool call: the call's start (its id and
// name), a fragment of its arguments, or its end. Its bytes are the decoder's, valid
// until its next Next.
type ToolPart struct {
	// Index is the call's number in the answer, from 0.
	Index int
	// ID and Name are the call's id and name (raw, JSON-escaped), on the event that
	// starts it.
	ID, Name []byte
	// Args is a fragment of the arguments: a JSON string's escaped content (OpenAI's
	// delta.tool_calls[].function.arguments, the Messages API's partial_json), or raw
	// JSON when ArgsJSON is set (Ollama's arguments object, whole).
	Args     []byte
	ArgsJSON bool
	// End says this event completes the call (the Messages API's content_block_stop of
	// a tool_use block; an Ollama line carrying the whole call).
	End bool
}

// toolOutput reports whether parts carry generated output (a name or arguments), which
// times TTFT and ITL as content does; a bare end carries none.
func toolOutput(parts []ToolPart) bool {
	for i := range parts {
		if len(parts[i].Name)+len(parts[i].Args) > 0 {
			return true
		}
	}
	return false
}

// ToolCall is one tool call of an answer, as the stream carried it.
type ToolCall struct {
	Index int    `json:"index"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
	// First is when the call's first part arrived (its name, or its first fragment), and
	// Done when the stream said it was complete (its block's end, the next call's start,
	// the finish reason or the stream's end marker); both from the request's start. Done
	// is 0 when the stream ended before the call did.
	First time.Duration `json:"first_ns"`
	Done  time.Duration `json:"done_ns,omitempty"`
	// Args is the arguments' JSON text, whole (kept out of requests.jsonl: a session's
	// next step sends it back).
	Args string `json:"-"`
	// ArgsJSON says the arguments parse as a JSON object; SchemaOK that they also match
	// the schema of the tool the request offered under Name (nil when it offered none by
	// that name). Why is what failed, for a person.
	ArgsJSON bool   `json:"args_json"`
	SchemaOK *bool  `json:"schema_ok,omitempty"`
	Why      string `json:"why,omitempty"`

	raw     []byte // the arguments as they came, still escaped unless rawJSON
	rawJSON bool
}

// toolPart records p, arrived at at.
func (s *Sample) toolPart(p *ToolPart, at time.Duration) {
	var tc *ToolCall
	for i := range s.ToolCalls {
		if s.ToolCalls[i].Index == p.Index {
			tc = &s.ToolCalls[i]
		}
	}
	if tc == nil {
		// A new call: the ones before it are complete (OpenAI says no more than that).
		for i := range s.ToolCalls {
			s.endTool(&s.ToolCalls[i], at)
		}
		s.ToolCalls = append(s.ToolCalls, ToolCall{Index: p.Index, First: at})
		tc = &s.ToolCalls[len(s.ToolCalls)-1]
	}
	if len(p.ID) > 0 {
		tc.ID = jsonscan.Unquote(p.ID)
	}
	if len(p.Name) > 0 {
		tc.Name = jsonscan.Unquote(p.Name)
	}
	tc.raw = append(tc.raw, p.Args...)
	tc.rawJSON = tc.rawJSON || p.ArgsJSON
	if p.End {
		s.endTool(tc, at)
	}
}

func (s *Sample) endTool(tc *ToolCall, at time.Duration) {
	if tc.Done == 0 {
		tc.Done = max(at, 1) // 0 means open; a fake clock's first instant is not
	}
}

// endTools completes every call still open: the answer ended at at.
func (s *Sample) endTools(at time.Duration) {
	for i := range s.ToolCalls {
		s.endTool(&s.ToolCalls[i], at)
	}
}

// finishTools turns each call's arguments into text and checks them against the tools
// the request offered.
func (s *Sample) finishTools(tools []Tool) {
	for i := range s.ToolCalls {
		tc := &s.ToolCalls[i]
		if tc.rawJSON {
			tc.Args = string(tc.raw)
		} else {
			tc.Args = jsonscan.Unquote(tc.raw)
		}
		tc.raw = nil
		tc.check(tools)
	}
}

// check sets ArgsJSON, SchemaOK and Why.
func (tc *ToolCall) check(tools []Tool) {
	var v any
	args := tc.Args
	if args == "" {
		args = "{}" // a call without arguments (OpenAI's "", the Messages API's no delta)
	}
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		tc.Why = "arguments are not JSON: " + err.Error()
		return
	}
	if _, ok := v.(map[string]any); !ok {
		tc.Why = "arguments are not a JSON object"
		return
	}
	tc.ArgsJSON = true
	for _, t := range tools {
		if t.Name != tc.Name {
			continue
		}
		ok := true
		if why := jsonschema.Match(v, t.Parameters, "arguments"); why != "" {
			ok, tc.Why = false, why
		}
		tc.SchemaOK = &ok
		return
	}
	if len(tools) > 0 {
		tc.Why = "the request offered no tool named " + strconv.Quote(tc.Name)
	}
}

// ToolCalled reports whether the answer called a tool.
func (s *Sample) ToolCalled() bool { return len(s.ToolCalls) > 0 }

// ToolCallValid reports whether every call of the answer was complete, with arguments
// that parse and match the offered tool's schema; false without a call.
func (s *Sample) ToolCallValid() bool {
	for _, tc := range s.ToolCalls {
		if tc.Done == 0 || !tc.ArgsJSON || tc.SchemaOK == nil || !*tc.SchemaOK {
			return false
		}
	}
	return len(s.ToolCalls) > 0
}

// ToolCallTimes are the first call's first part and its completion, from the request's
// start; ok is false without a call, or when the stream ended before it completed.
func (s *Sample) ToolCallTimes() (first, done time.Duration, ok bool) {
	if len(s.ToolCalls) == 0 || s.ToolCalls[0].Done == 0 || s.Unstreamed {
		return 0, 0, false
	}
	return s.ToolCalls[0].First, s.ToolCalls[0].Done, true
}

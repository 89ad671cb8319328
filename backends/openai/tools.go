package openai

import (
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// toolFields adds req's tools and tool_choice to a chat body: a named choice is
// {"type":"function","function":{"name":...}}, the others their word ("required" is
// what vLLM forces a call with, by guided decoding, even from a model that would not).
func toolFields(m map[string]any, req backends.Request) {
	if len(req.Tools) > 0 {
		m["tools"] = backends.FunctionTools(req.Tools)
	}
	switch req.ToolChoice {
	case "":
	case backends.ToolChoiceAuto, backends.ToolChoiceRequired, backends.ToolChoiceNone:
		m["tool_choice"] = req.ToolChoice
	default:
		m["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": req.ToolChoice}}
	}
}

// parseToolCalls reads a delta's (or message's) tool_calls into parts: each entry's
// index (its place in a message, which has none), id, function name and arguments
// fragment, still escaped. Tool calls are rare next to content: allocating their parts
// is fine.
func parseToolCalls(sc *jsonscan.Scanner, parts []backends.ToolPart) []backends.ToolPart {
	if !sc.Array() {
		return parts
	}
	for n := 0; sc.More(); n++ {
		p := backends.ToolPart{Index: n}
		if !sc.Object() {
			continue
		}
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			switch string(key) {
			case "index":
				i, _ := sc.Int()
				p.Index = int(i)
			case "id":
				p.ID = stringOrNull(sc)
			case "function":
				if !sc.Object() {
					continue
				}
				for key, ok := sc.Key(); ok; key, ok = sc.Key() {
					switch string(key) {
					case "name":
						p.Name = stringOrNull(sc)
					case "arguments":
						p.Args = stringOrNull(sc)
					default:
						sc.Skip()
					}
				}
			default:
				sc.Skip()
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// stringOrNull is a string value's raw bytes, nil for null or another type.
func stringOrNull(sc *jsonscan.Scanner) []byte {
	if sc.Peek() != '"' {
		sc.Skip()
		return nil
	}
	raw, _ := sc.String()
	return raw
}

// cachedTokens reads prompt_tokens_details (input_tokens_details) for cached_tokens.
func cachedTokens(sc *jsonscan.Scanner) int {
	n := 0
	if !sc.Object() {
		return 0
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		if string(key) == "cached_tokens" && sc.Peek() != 'n' {
			v, _ := sc.Int()
			n = int(v)
		} else {
			sc.Skip()
		}
	}
	return n
}

// chatMessage is a chat message in OpenAI's shape with its tool parts: an assistant's
// tool_calls (arguments as a JSON string), or a tool's result under its tool_call_id.
type chatMessage struct {
	Content    string         `json:"content"`
	Role       string         `json:"role"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatMessages is req's messages as a chat body carries them: the plain pairs, unless a
// message is a tool call or a tool's result (an agent loop's step).
func chatMessages(req backends.Request) any {
	return backends.WireMessages(req, func(i int, m backends.Message) chatMessage {
		out := chatMessage{Content: m.Content, Role: m.Role, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			c := chatToolCall{ID: tc.CallID(i), Type: "function"}
			c.Function.Name, c.Function.Arguments = tc.Name, string(tc.ArgsObject()) // a server may parse them back
			out.ToolCalls = append(out.ToolCalls, c)
		}
		return out
	})
}

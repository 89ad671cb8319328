package ollama

import (
	"encoding/json"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// parseToolCalls reads a message's tool_calls: Ollama sends each call whole, its
// arguments a JSON object (kept raw), on one line, so each part starts and ends its call.
// The call's number is its function.index (its place on the line when absent). Tool
// calls are rare next to content: allocating their parts is fine.
func parseToolCalls(sc *jsonscan.Scanner, parts []backends.ToolPart) []backends.ToolPart {
	if !sc.Array() {
		return parts
	}
	for n := 0; sc.More(); n++ {
		p := backends.ToolPart{Index: n, ArgsJSON: true, End: true}
		if !sc.Object() {
			continue
		}
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			switch string(key) {
			case "id":
				p.ID, _ = sc.String()
			case "function":
				if !sc.Object() {
					continue
				}
				for key, ok := sc.Key(); ok; key, ok = sc.Key() {
					switch string(key) {
					case "index":
						i, _ := sc.Int()
						p.Index = int(i)
					case "name":
						p.Name, _ = sc.String()
					case "arguments":
						p.Args = sc.Raw()
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

// chatMessage is a chat message in Ollama's shape with its tool parts: an assistant's
// tool_calls (arguments as a JSON object), or a tool's result under its tool_name.
type chatMessage struct {
	Content   string         `json:"content"`
	Role      string         `json:"role"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	ToolName  string         `json:"tool_name,omitempty"`
}

type chatToolCall struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// chatMessages is req's messages as /api/chat takes them: the plain pairs, unless a
// message is a tool call or a tool's result (an agent loop's step).
func chatMessages(req backends.Request) any {
	return backends.WireMessages(req, func(_ int, m backends.Message) chatMessage {
		out := chatMessage{Content: m.Content, Role: m.Role, ToolName: m.ToolName}
		for _, tc := range m.ToolCalls {
			var c chatToolCall
			c.Function.Name, c.Function.Arguments = tc.Name, tc.ArgsObject()
			out.ToolCalls = append(out.ToolCalls, c)
		}
		return out
	})
}

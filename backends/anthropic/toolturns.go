package anthropic

import (
	"encoding/json"

	"github.com/planrun/planrun/backends"
)

// block is a content block of a message that carries tool parts: text, an assistant's
// tool_use (its input a JSON object), or a tool_result under the call's id.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

// messagesOf is a conversation as the Messages API takes it. Plain messages keep their
// string content; an assistant message with tool calls becomes its text and tool_use
// blocks, and the tools' results that follow it become one user message of
// tool_result blocks (the API has no tool role). System messages (a replayed agent's)
// go apart, joined, as the API's top-level system.
func messagesOf(msgs []backends.Message) (out []message, system string) {
	out = make([]message, 0, len(msgs))
	for i, m := range msgs {
		switch {
		case m.Role == roleSystem:
			if system != "" {
				system += "\n\n"
			}
			system += m.Content
		case m.Role == backends.RoleTool:
			r := block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}
			if n := len(out); n > 0 && out[n-1].Role == backends.RoleUser {
				if blocks, ok := out[n-1].Content.([]block); ok {
					out[n-1].Content = append(blocks, r)
					continue
				}
			}
			out = append(out, message{Role: backends.RoleUser, Content: []block{r}})
		case len(m.ToolCalls) > 0:
			var blocks []block
			if m.Content != "" {
				blocks = append(blocks, block{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, block{Type: "tool_use", ID: tc.CallID(i), Name: tc.Name, Input: tc.ArgsObject()})
			}
			out = append(out, message{Role: m.Role, Content: blocks})
		default:
			out = append(out, message{Role: m.Role, Content: m.Content})
		}
	}
	return out, system
}

// roleSystem is a system message's role, which the Messages API takes as a field.
const roleSystem = "system"

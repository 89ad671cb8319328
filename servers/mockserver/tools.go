package mockserver

import (
	"encoding/json"
	"slices"
	"sort"
)

// mockTool is a request's tool in any protocol's shape: OpenAI's and Ollama's
// {"type":"function","function":{"name","parameters"}}, the Messages API's {"name",
// "input_schema"}.
type mockTool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"input_schema"`
	Function    struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"function"`
}

func (t mockTool) name() string {
	if t.Function.Name != "" {
		return t.Function.Name
	}
	return t.Name
}

func (t mockTool) schema() map[string]any {
	if t.Function.Parameters != nil {
		return t.Function.Parameters
	}
	return t.InputSchema
}

// toolCall is the call the mock answers with: the tool's name and the property its
// generated tokens go in, so the arguments are {"<prop>":"<tokens>"}.
type toolCall struct {
	name, prop string
}

// toolRequest is the part of a request that offers tools.
type toolRequest struct {
	Tools      []mockTool      `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// choose decides whether request n, whose conversation carries results tools'
// results, calls a tool and which: tool_choice "none" never; with Config.ToolCalls, while
// results are fewer than it, whatever else tool_choice says (the named tool, else the
// first), and never after; else "required" / "any" / a named tool always (the named
// one), otherwise (auto, or none given) with probability Config.ToolCallRate drawn from
// the seed, the first tool. nil: no call, a text answer.
func (c Config) choose(q toolRequest, n uint64, results int) *toolCall {
	if len(q.Tools) == 0 {
		return nil
	}
	var word string
	var named struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(q.ToolChoice, &word) != nil && json.Unmarshal(q.ToolChoice, &named) == nil {
		word = named.Type
	}
	pick := q.Tools[0]
	switch {
	case word == "none":
		return nil
	case c.ToolCalls > 0 && results >= c.ToolCalls:
		return nil
	}
	switch word {
	case "required", "any":
	case "tool", "function":
		want := named.Name + named.Function.Name
		i := slices.IndexFunc(q.Tools, func(t mockTool) bool { return t.name() == want })
		if i < 0 {
			return nil
		}
		pick = q.Tools[i]
	default: // auto
		if c.ToolCalls > 0 {
			break
		}
		if unitFloat(mix(c.Seed, n, toolDraw)) >= c.ToolCallRate {
			return nil
		}
	}
	return &toolCall{name: pick.name(), prop: stringProperty(pick.schema())}
}

// toolDraw keys the seeded draw of whether an auto request calls a tool.
const toolDraw = 1 << 40

// stringProperty is the first (by name) string property of schema, or "input".
func stringProperty(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if p, ok := props[k].(map[string]any); ok && p["type"] == "string" {
			return k
		}
	}
	return "input"
}

// appendArgs appends tokens [from, to) of g's call's arguments: the opening
// {"<prop>": " before the first token and "} after the last, escaped as inside a JSON
// string when quoted (OpenAI's arguments, the Messages API's partial_json).
func appendArgs(b []byte, g *generation, from, to int, quoted bool) []byte {
	q := `"`
	if quoted {
		q = `\"`
	}
	if from == 0 {
		b = append(b, '{')
		b = append(b, q...)
		b = append(b, g.tool.prop...)
		b = append(b, q...)
		b = append(b, ':')
		b = append(b, q...)
	}
	b = appendTokens(b, from, to)
	if to == g.tokens {
		b = append(b, q...)
		b = append(b, '}')
	}
	return b
}

// quotedToolName is the call's name as a JSON string.
func (g *generation) quotedToolName() []byte { return quote(g.tool.name) }

// callsTools says whether enc's protocol answers with tool calls: OpenAI's chat, the
// Messages API and Ollama's chat (a streamed answer; a whole one is text).
func callsTools(enc encoder) bool {
	switch e := enc.(type) {
	case openaiEncoder:
		return e.kind == openaiChat
	case messagesEncoder:
		return true
	case ollamaEncoder:
		return e.kind == ollamaChat
	}
	return false
}

// appendOllamaToolCall writes Ollama's tool-call line: Ollama parses a call out of the
// generated text and sends it whole, so the tokens before the last chunk write nothing
// and the last chunk's line carries the call, its arguments an object.
func appendOllamaToolCall(b []byte, g *generation, to int) []byte {
	b = append(b, `","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_`...)
	b = append(b, g.quotedID[1:]...)
	b = append(b, `,"function":{"index":0,"name":`...)
	b = append(b, g.quotedToolName()...)
	b = append(b, `,"arguments":`...)
	b = appendArgs(b, g, 0, g.tokens, false)
	return append(b, `}}]},"done":false}`+"\n"...)
}

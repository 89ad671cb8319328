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

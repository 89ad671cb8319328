package ollama

import (
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

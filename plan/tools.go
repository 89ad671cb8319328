package plan

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Tools is what a workload offers the model to call: its tool blocks, and tool_choice.
type Tools struct {
	// Tools are the functions, in the plan's order.
	Tools []backends.Tool
	// Choice is tool_choice: "auto", "required", "none", a tool's name, or "" (the
	// server's default).
	Choice string
}

var toolSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "description"}, {Name: "parameters"}, {Name: "parameters_file"}},
}

// toolChoices are tool_choice's words besides a tool's name.
var toolChoices = []string{backends.ToolChoiceAuto, backends.ToolChoiceRequired, backends.ToolChoiceNone}

// decodeTools reads a workload's tool "<name>" { description, parameters |
// parameters_file } blocks and its tool_choice. parameters is the JSON Schema of the
// arguments as an HCL object; parameters_file a JSON file holding it (relative to the
// plan).
func decodeTools(l *loader, w *Workload, blocks hcl.Blocks, a hcl.Attributes, ctx *hcl.EvalContext) {
	seen := map[string]hcl.Range{}
	for _, b := range blocks {
		name := b.Labels[0]
		if first, dup := seen[name]; dup {
			l.errorf(b.LabelRanges[0].Ptr(), "Duplicate tool", "The workload already offers a tool %q (at %s).", name, first)
			continue
		}
		seen[name] = b.DefRange
		t := backends.Tool{Name: name}
		content, diags := b.Body.Content(toolSchema)
		l.add(diags)
		l.decode(content.Attributes["description"], ctx, &t.Description)
		t.Parameters = toolParameters(l, content.Attributes, ctx)
		w.Tools.Tools = append(w.Tools.Tools, t)
	}
	c := a["tool_choice"]
	if c == nil || !l.decode(c, ctx, &w.Tools.Choice) {
		return
	}
	names := make([]string, len(w.Tools.Tools))
	for i, t := range w.Tools.Tools {
		names[i] = t.Name
	}
	switch {
	case len(names) == 0:
		l.errorf(c.NameRange.Ptr(), "tool_choice without tools", "tool_choice chooses among the workload's tool blocks, and it has none: add tool \"<name>\" { parameters = { ... } }.")
	case !slices.Contains(toolChoices, w.Tools.Choice) && !slices.Contains(names, w.Tools.Choice):
		options := append(slices.Clone(toolChoices), names...)
		l.errorf(c.Expr.Range().Ptr(), "Invalid tool_choice", "tool_choice is %s or one of the workload's tools by name, not %q.%s",
			quoteList(toolChoices), w.Tools.Choice, suggestion(w.Tools.Choice, options))
	}
}

// toolParameters is a tool block's argument schema, from parameters or parameters_file.
func toolParameters(l *loader, a hcl.Attributes, ctx *hcl.EvalContext) map[string]any {
	p, f := a["parameters"], a["parameters_file"]
	var raw []byte
	switch {
	case p != nil && f != nil:
		l.errorf(f.NameRange.Ptr(), "Conflicting arguments", "Give parameters or parameters_file, not both (parameters is at %s).", p.NameRange)
		return nil
	case p != nil:
		v, ok := l.eval(p.Expr, ctx, scopePlan)
		if !ok {
			return nil
		}
		if !v.Type().IsObjectType() && !v.Type().IsMapType() {
			l.errorf(p.Expr.Range().Ptr(), "Invalid parameters", "parameters is the JSON Schema of the tool's arguments as an object, such as { type = \"object\", properties = { city = { type = \"string\" } } }.")
			return nil
		}
		raw, _ = ctyjson.Marshal(v, v.Type())
	case f != nil:
		var path string
		if !l.decode(f, ctx, &path) {
			return nil
		}
		b, err := os.ReadFile(l.resolvePath(path))
		if err != nil {
			l.errorf(f.Expr.Range().Ptr(), "Cannot read parameters_file", "%v", err)
			return nil
		}
		raw = b
	default:
		return nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		l.errorf(cmpRange(p, f), "Invalid parameters", "The tool's parameters are not a JSON object: %v.", err)
		return nil
	}
	return schema
}

// cmpRange is the range of whichever of p and f is set.
func cmpRange(p, f *hcl.Attribute) *hcl.Range {
	if p != nil {
		return p.Expr.Range().Ptr()
	}
	return f.Expr.Range().Ptr()
}

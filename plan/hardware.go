package plan

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Hardware is a `hardware "<name>"` block: the machine a cell runs on, as recorded in
// every result row (the seed's environment columns).
type Hardware struct {
	Name, GPU string
	VRAMGB    float64
	Driver    string
	CUDA      string
	Host      string
	Notes     string
}

var hardwareSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "gpu"}, {Name: "vram_gb"}, {Name: "driver"}, {Name: "cuda"}, {Name: "host"}, {Name: "notes"},
	},
}

func (h *Hardware) object() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"ref":     cty.StringVal("hardware." + h.Name),
		"name":    cty.StringVal(h.Name),
		"gpu":     cty.StringVal(h.GPU),
		"vram_gb": cty.NumberFloatVal(h.VRAMGB),
		"driver":  cty.StringVal(h.Driver),
		"cuda":    cty.StringVal(h.CUDA),
		"host":    cty.StringVal(h.Host),
	})
}

func (l *loader) decodeHardwareBlock(b *hcl.Block, ctx *hcl.EvalContext) *Hardware {
	name := b.Labels[0]
	if !validName(name) {
		return nil
	}
	for _, prev := range l.p.Hardware {
		if prev.Name == name {
			return nil
		}
	}
	h := &Hardware{Name: name}
	content, diags := b.Body.Content(hardwareSchema)
	l.add(diags)
	before := len(l.diags)
	a := content.Attributes
	l.decode(a["gpu"], ctx, &h.GPU)
	if l.decode(a["vram_gb"], ctx, &h.VRAMGB) && h.VRAMGB < 0 {
		l.errorf(a["vram_gb"].Expr.Range().Ptr(), "Invalid vram_gb", "vram_gb is the card's memory in GB and cannot be negative.")
	}
	l.decode(a["driver"], ctx, &h.Driver)
	l.decode(a["cuda"], ctx, &h.CUDA)
	l.decode(a["host"], ctx, &h.Host)
	l.decode(a["notes"], ctx, &h.Notes)
	if hasErrorsSince(l.diags, before) {
		return standIn(l, h)
	}
	return h
}

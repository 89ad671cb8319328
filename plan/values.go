package plan

import (
	"maps"
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// evaluation is one expression the loader evaluated, and the context it was evaluated in.
type evaluation struct {
	expr hcl.Expression
	ctx  *hcl.EvalContext
}

// attachValues gives every diagnostic about an evaluated value the expression and
// context it came from, so WriteDiagnostics shows the values of the variables and locals
// it was made from ("var.port is 0"), whichever check reported it. A diagnostic's value
// is the narrowest evaluated expression holding its subject, or the one its subject
// names on the same line (an attribute's name, blamed for what its value does).
func attachValues(diags hcl.Diagnostics, evaluated []evaluation) {
	for _, d := range diags {
		if d.Expression != nil || d.Subject == nil {
			continue
		}
		var best *evaluation
		for i := range evaluated {
			e := &evaluated[i]
			r := e.expr.Range()
			if r.Filename != d.Subject.Filename {
				continue
			}
			inside := r.Start.Byte <= d.Subject.Start.Byte && d.Subject.End.Byte <= r.End.Byte
			names := d.Subject.End.Byte <= r.Start.Byte && d.Subject.Start.Line == r.Start.Line
			if !inside && !names {
				continue
			}
			if best == nil || r.End.Byte-r.Start.Byte < best.expr.Range().End.Byte-best.expr.Range().Start.Byte {
				best = e
			}
		}
		if best != nil {
			d.Expression, d.EvalContext = best.expr, best.ctx
		}
	}
}

// hideSensitive gives each diagnostic that shows values a context of its own in which
// the sensitive variables' values are marked, so WriteDiagnostics says "is sensitive"
// instead of printing them. The context only serves the display.
func hideSensitive(diags hcl.Diagnostics, vars []*Variable) {
	var names []string
	for _, v := range vars {
		if v.Sensitive {
			names = append(names, v.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	// The values themselves, wherever a detail quotes them (and a URL's host).
	var secrets []string
	for _, v := range vars {
		if !v.Sensitive || v.Value.IsNull() || !v.Value.IsKnown() || v.Value.Type() != cty.String {
			continue
		}
		if s := v.Value.AsString(); len(s) >= 3 {
			secrets = append(secrets, s)
			if u, err := url.Parse(s); err == nil && len(u.Hostname()) >= 3 {
				secrets = append(secrets, u.Hostname())
			}
		}
	}
	for _, d := range diags {
		for _, s := range secrets {
			d.Detail = strings.ReplaceAll(d.Detail, s, "(sensitive)")
		}
	}
	for _, d := range diags {
		if d.EvalContext == nil || d.Expression == nil {
			continue
		}
		merged := map[string]cty.Value{}
		var chain []*hcl.EvalContext
		for c := d.EvalContext; c != nil; c = c.Parent() {
			chain = append(chain, c)
		}
		for i := len(chain) - 1; i >= 0; i-- { // the child's names win
			maps.Copy(merged, chain[i].Variables)
		}
		if vv, ok := merged["var"]; ok && vv.Type().IsObjectType() && vv.IsKnown() && !vv.IsNull() {
			attrs := vv.AsValueMap()
			for _, n := range names {
				if a, ok := attrs[n]; ok {
					attrs[n] = a.Mark(sensitiveMark)
				}
			}
			merged["var"] = cty.ObjectVal(attrs)
		}
		d.EvalContext = &hcl.EvalContext{Variables: merged}
	}
}

// sensitiveMark marks a sensitive variable's value in a display context.
const sensitiveMark = "sensitive"

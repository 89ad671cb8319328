package plan

import "github.com/hashicorp/hcl/v2"

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
func (l *loader) attachValues() {
	for _, d := range l.diags {
		if d.Expression != nil || d.Subject == nil {
			continue
		}
		var best *evaluation
		for i := range l.evaluated {
			e := &l.evaluated[i]
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

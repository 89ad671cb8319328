package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// keyNeedsQuotes is the summary of an object key written bare that HCL reads as an
// expression: `limits = { nvidia.com/gpu = 1 }`, as in a pod's YAML, is nvidia.com
// divided by gpu, and HCL's message says only that there is no variable named nvidia.
const keyNeedsQuotes = "Key needs quotes"

// unquotedKeys reports each object key in expr that is neither one name nor quoted nor
// in parentheses and that is no reference the scope allows (var.x as a key is HCL's
// way to compute one), with the key quoted as the fix. within are the keys' ranges, so
// the caller says nothing more about the names inside them.
func unquotedKeys(expr hcl.Expression, src []byte, allowed []string) (diags hcl.Diagnostics, within []hcl.Range) {
	syn, ok := expr.(hclsyntax.Expression)
	if !ok {
		return nil, nil
	}
	hclsyntax.VisitAll(syn, func(n hclsyntax.Node) hcl.Diagnostics {
		obj, ok := n.(*hclsyntax.ObjectConsExpr)
		if !ok {
			return nil
		}
		for _, item := range obj.Items {
			k, ok := item.KeyExpr.(*hclsyntax.ObjectConsKeyExpr)
			if !ok || k.ForceNonLiteral || !bareExpression(k.Wrapped, allowed) {
				continue
			}
			r := k.Range()
			text := string(r.SliceBytes(src))
			if text == "" {
				continue
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  keyNeedsQuotes,
				Detail: fmt.Sprintf("The key %s is read as an expression%s, not as a name. Quote it: %q = …",
					text, readAs(k.Wrapped), strings.TrimSpace(text)),
				Subject: r.Ptr(),
			})
			within = append(within, r)
		}
		return nil
	})
	return diags, within
}

// bareExpression reports whether a key is an expression written bare where a name was
// meant: not one name (HCL takes that literally), not a literal or a template, not a
// reference to a root the scope allows.
func bareExpression(e hclsyntax.Expression, allowed []string) bool {
	if hcl.ExprAsKeyword(e) != "" {
		return false
	}
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr, *hclsyntax.TemplateExpr, *hclsyntax.TemplateWrapExpr, *hclsyntax.ParenthesesExpr:
		return false
	case *hclsyntax.ScopeTraversalExpr:
		return !slices.Contains(allowed, e.Traversal.RootName())
	}
	return true
}

// readAs says what HCL makes of a bare key: " (nvidia.com divided by gpu)".
func readAs(e hclsyntax.Expression) string {
	b, ok := e.(*hclsyntax.BinaryOpExpr)
	if !ok {
		return ""
	}
	op := map[*hclsyntax.Operation]string{
		hclsyntax.OpDivide: "divided by", hclsyntax.OpSubtract: "minus", hclsyntax.OpAdd: "plus",
		hclsyntax.OpMultiply: "times", hclsyntax.OpModulo: "modulo",
	}[b.Op]
	if op == "" {
		return ""
	}
	return fmt.Sprintf(" (%s %s %s)", exprText(b.LHS), op, exprText(b.RHS))
}

// inAny reports whether r lies within one of the ranges.
func inAny(r hcl.Range, rs []hcl.Range) bool {
	for _, x := range rs {
		if x.Filename == r.Filename && x.ContainsOffset(r.Start.Byte) {
			return true
		}
	}
	return false
}

package plan

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// exprAt is the sub-expression of a literal list or object at path, as far as the
// literal goes: an error inside a multi-line value then points at its item, not at
// the value's first line.
func exprAt(expr hcl.Expression, path cty.Path) hcl.Expression {
	for _, step := range path {
		var next hcl.Expression
		switch s := step.(type) {
		case cty.IndexStep:
			if s.Key.Type() == cty.Number && s.Key.IsKnown() && !s.Key.IsNull() {
				i, _ := s.Key.AsBigFloat().Int64()
				if t, ok := expr.(*hclsyntax.TupleConsExpr); ok && int(i) < len(t.Exprs) && i >= 0 {
					next = t.Exprs[i]
				}
			} else if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
				next = itemFor(expr, s.Key.AsString())
			}
		case cty.GetAttrStep:
			next = itemFor(expr, s.Name)
		}
		if next == nil {
			return expr
		}
		expr = next
	}
	return expr
}

// itemFor is the value of a literal object's item with the given key, or nil.
func itemFor(expr hcl.Expression, key string) hcl.Expression {
	if item := objectItem(expr, key); item != nil {
		return item.ValueExpr
	}
	return nil
}

// keyRange is the range of a literal object's item (key and value) with the given
// key, or of the whole expression when it is not a literal object.
func keyRange(expr hcl.Expression, key string) *hcl.Range {
	if item := objectItem(expr, key); item != nil {
		r := hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range())
		return &r
	}
	return expr.Range().Ptr()
}

func objectItem(expr hcl.Expression, key string) *hclsyntax.ObjectConsItem {
	o, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil
	}
	for i, item := range o.Items {
		k := hcl.ExprAsKeyword(item.KeyExpr)
		if k == "" {
			if v, diags := item.KeyExpr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
				k = v.AsString()
			}
		}
		if k == key {
			return &o.Items[i]
		}
	}
	return nil
}

// pathString writes a path as an HCL suffix: [1], ["X-Team"], .name.
func pathString(path cty.Path) string {
	var b strings.Builder
	for _, step := range path {
		switch s := step.(type) {
		case cty.IndexStep:
			if s.Key.Type() == cty.Number {
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', -1))
			} else if s.Key.Type() == cty.String {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			}
		case cty.GetAttrStep:
			fmt.Fprintf(&b, ".%s", s.Name)
		}
	}
	return b.String()
}

// nullPath is the path to the first null inside a collection value, if any: a list or
// map element that is null is a mistake, where a whole attribute set to null is "unset".
func nullPath(v cty.Value) (cty.Path, bool) {
	var found cty.Path
	_ = cty.Walk(v, func(p cty.Path, ev cty.Value) (bool, error) {
		if found != nil || !ev.IsKnown() {
			return false, nil
		}
		if ev.IsNull() && len(p) > 0 {
			found = p.Copy()
			return false, nil
		}
		return true, nil
	})
	return found, found != nil
}

// unsuitablePath is the path to the innermost element of v that cannot convert to its
// part of ty: convert's errors for an object given where a map or list is wanted name
// the element in words ("element \"X-B\": string required") but carry no path, which
// would blame the collection's first line instead of the value's.
func unsuitablePath(v cty.Value, ty cty.Type) cty.Path {
	if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return nil
	}
	var elem cty.Type
	switch {
	case ty.IsMapType(), ty.IsListType(), ty.IsSetType():
		elem = ty.ElementType()
	default:
		return nil
	}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if _, err := convert.Convert(ev, elem); err != nil {
			return append(cty.Path{cty.IndexStep{Key: k}}, unsuitablePath(ev, elem)...)
		}
	}
	return nil
}

// checkSuits reports, on the narrowest item, a value that cannot be decoded into
// target: a null element, or an element of the wrong type. The summary names the
// attribute ("Invalid concurrency"), which HCL's "Unsuitable value type" does not.
func checkSuits(a *hcl.Attribute, ctx *hcl.EvalContext, v cty.Value, target any) hcl.Diagnostics {
	var rep report
	ty, err := gocty.ImpliedType(target)
	if err != nil {
		return nil
	}
	if p, ok := nullPath(v); ok {
		rep.errorIn(a.Expr, ctx, exprAt(a.Expr, p).Range().Ptr(), "Invalid "+a.Name,
			"%s%s is null; each element of %s needs a value.", a.Name, pathString(p), a.Name)
		return rep.diags
	}
	if _, err := convert.Convert(v, ty); err != nil {
		var p cty.Path
		if pe, ok := err.(cty.PathError); ok {
			p = pe.Path
		}
		if len(p) == 0 {
			p = unsuitablePath(v, ty) // convert names the element only in its message
		}
		rep.errorIn(a.Expr, ctx, exprAt(a.Expr, p).Range().Ptr(), "Invalid "+a.Name,
			"%s%s: %s.%s", a.Name, pathString(p), err.Error(), elementHint(a.Name, v, ty, p))
		return rep.diags
	}
	return nil
}

// traversalText writes a traversal as it is written in a plan: var.tool, server["x"].
func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString(pathString(cty.Path{cty.IndexStep{Key: s.Key}}))
		}
	}
	return b.String()
}

package plan

import (
	"bytes"
	"fmt"
	"maps"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// parseFile parses one plan or variables file. A file that is not UTF-8 is refused
// before HCL reads it, anywhere the bad byte is (a comment too): HCL would report it as
// an unterminated template, or skip it silently in a comment. A character outside
// strings and comments that is not ASCII is named (strangeCharacters). A parsed file's map
// literals are checked for keys given twice, which HCL would collapse to the last.
func parseFile(parser *hclparse.Parser, name string, src []byte) (*hcl.File, hcl.Diagnostics) {
	if d := encodingError(name, src); d != nil {
		return nil, hcl.Diagnostics{d}
	}
	chars, repaired, lines := strangeCharacters(name, src)
	slips, repaired, slipLines := repairSlips(name, repaired)
	chars = append(chars, slips...) // both repaired, both the one error on their line
	maps.Copy(lines, slipLines)
	f, diags := parser.ParseHCL(repaired, name)
	diags = openHeredoc(name, repaired, diags)
	if len(chars) > 0 {
		// The characters are the mistakes on their lines; the rest of the file is read
		// as the user meant it, with each replaced by the ASCII one it stands for.
		diags = append(outsideLines(diags, lines), chars...)
	}
	if f != nil {
		f.Bytes = src
		if body, ok := f.Body.(*hclsyntax.Body); ok {
			diags = append(diags, duplicateKeys(body)...)
		}
	}
	return f, diags
}

// outsideLines keeps the diagnostics whose subject is on none of the lines.
func outsideLines(diags hcl.Diagnostics, lines map[int]bool) hcl.Diagnostics {
	var kept hcl.Diagnostics
	for _, d := range diags {
		if d.Subject == nil || !lines[d.Subject.Start.Line] {
			kept = append(kept, d)
		}
	}
	return kept
}

// encodingError names the first byte of src that is not UTF-8, with its offset, line
// and column; nil when src is UTF-8.
func encodingError(name string, src []byte) *hcl.Diagnostic {
	if utf8.Valid(src) {
		return nil
	}
	hint := "Save it as UTF-8 (in most editors: \"Save with encoding\" → UTF-8; or iconv -f LATIN1 -t UTF-8)."
	if bytes.HasPrefix(src, []byte{0xff, 0xfe}) || bytes.HasPrefix(src, []byte{0xfe, 0xff}) {
		hint = "It starts with a UTF-16 byte-order mark: save it as UTF-8 (iconv -f UTF-16 -t UTF-8)."
	}
	off := 0
	for off < len(src) {
		r, size := utf8.DecodeRune(src[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	lineStart := bytes.LastIndexByte(src[:off], '\n') + 1
	col := 1 + utf8.RuneCount(src[lineStart:off])
	start := hcl.Pos{Line: line, Column: col, Byte: off}
	end := hcl.Pos{Line: line, Column: col + 1, Byte: off + 1}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid file encoding",
		Detail:   fmt.Sprintf("%s is not UTF-8: the byte 0x%02x at offset %d (line %d, column %d) is not valid UTF-8. %s", name, src[off], off, line, col, hint),
		Subject:  &hcl.Range{Filename: name, Start: start, End: end},
	}
}

const duplicateKeySummary = "Duplicate key"

// duplicateKeys finds the map and object literals anywhere in body (attributes of every
// block, nested values too) that give one key twice, as in a model mix
// models = { a = 1, a = 2 }: HCL keeps the last silently, so the first is lost. Each
// error is on the second key and names where the first is. Keys computed from
// expressions are checked when their value is known without a context.
func duplicateKeys(body *hclsyntax.Body) hcl.Diagnostics {
	var diags hcl.Diagnostics
	hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		obj, ok := n.(*hclsyntax.ObjectConsExpr)
		if !ok {
			return nil
		}
		first := map[string]hcl.Range{}
		for _, item := range obj.Items {
			k, kd := item.KeyExpr.Value(nil)
			if kd.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
				continue
			}
			key := k.AsString()
			r := item.KeyExpr.Range()
			if prev, dup := first[key]; dup {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  duplicateKeySummary,
					Detail:   fmt.Sprintf("The key %q is given twice in this map: first at %s:%d, again here. Only one value would be kept, silently; give each key once.", key, prev.Filename, prev.Start.Line),
					Subject:  r.Ptr(),
				})
				continue
			}
			first[key] = r
		}
		return nil
	})
	return diags
}

// computedDuplicateKeys reports, for an object literal evaluated in ctx, a key that a
// computed key ((var.base) = 2) makes equal to another: duplicateKeys sees only the
// keys known without a context.
func computedDuplicateKeys(expr hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	type seen struct {
		r        hcl.Range
		computed bool
	}
	first := map[string]seen{}
	for _, item := range obj.Items {
		_, literal := item.KeyExpr.Value(nil)
		k, kd := item.KeyExpr.Value(ctx)
		if kd.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			continue
		}
		key, r, computed := k.AsString(), item.KeyExpr.Range(), literal.HasErrors()
		if prev, dup := first[key]; dup && (computed || prev.computed) { // two literals: said at parse
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: duplicateKeySummary,
				Detail:      fmt.Sprintf("The key %q is given twice in this map: first at %s:%d, again here. Only one value would be kept, silently; give each key once.", key, prev.r.Filename, prev.r.Start.Line),
				Subject:     r.Ptr(),
				Expression:  item.KeyExpr,
				EvalContext: ctx,
			})
			continue
		}
		first[key] = seen{r, computed}
	}
	return diags
}

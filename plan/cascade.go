package plan

import (
	"regexp"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// absent marks a diagnostic whose premise is that a block body lacks an argument or
// block named name ("Capacity search without an slo"). When the same body has a
// misspelling of that name, the misspelling is the one mistake and this one its echo.
type absent struct{ name string }

// errorAbsent is errorf for a check whose premise is that the body lacks name.
func (l *loader) errorAbsent(name string, subject *hcl.Range, summary, format string, args ...any) {
	l.errorf(subject, summary, format, args...)
	l.diags[len(l.diags)-1].Extra = absent{name}
}

var (
	missingArgument = regexp.MustCompile(`^The argument "([^"]+)" is required`)
	didYouMean      = regexp.MustCompile(`Did you mean "([^"]+)"\?`)
)

// dropCascades removes the errors one misspelt name in a nested block causes on correct
// lines: a required argument "missing" beside its misspelling (target_attainment_pc), or
// a check that finds no slo block beside a block "sloo". Only the misspelling is kept.
func dropCascades(diags hcl.Diagnostics, files map[string]*hcl.File) hcl.Diagnostics {
	type key struct {
		name string
		body hcl.Range
	}
	typos := map[key]bool{}
	for _, d := range diags {
		if d.Subject == nil || d.Summary != "Unsupported argument" && d.Summary != "Unsupported block type" {
			continue
		}
		if m := didYouMean.FindStringSubmatch(d.Detail); m != nil {
			if body, ok := enclosingBody(files, *d.Subject); ok {
				typos[key{m[1], body}] = true
			}
		}
	}
	if len(typos) == 0 {
		return diags
	}
	kept := diags[:0:0]
	for _, d := range diags {
		name := ""
		if m := missingArgument.FindStringSubmatch(d.Detail); d.Summary == "Missing required argument" && m != nil {
			name = m[1]
		} else if a, ok := d.Extra.(absent); ok {
			name = a.name
		}
		if name != "" && d.Subject != nil {
			if body, ok := enclosingBody(files, *d.Subject); ok && typos[key{name, body}] {
				continue
			}
		}
		kept = append(kept, d)
	}
	return kept
}

// enclosingBody is the range of the innermost block body that holds r's start: the
// body of the block an argument or nested block is written in. HCL reports a missing
// argument at the body's opening brace, which is inside that body.
func enclosingBody(files map[string]*hcl.File, r hcl.Range) (hcl.Range, bool) {
	f := files[r.Filename]
	if f == nil {
		return hcl.Range{}, false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return hcl.Range{}, false
	}
	var found hcl.Range
	ok = false
	for {
		var inner *hclsyntax.Body
		for _, b := range body.Blocks {
			if b.Body != nil && b.Body.SrcRange.ContainsOffset(r.Start.Byte) {
				inner = b.Body
			}
		}
		if inner == nil {
			return found, ok
		}
		found, ok, body = inner.SrcRange, true, inner
	}
}

package plan

import (
	"regexp"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/planrun/planrun/internal/suggest"
)

// absent marks a diagnostic whose premise is that a block body lacks an argument or
// block ("Capacity search without an slo", a goal on send lag in a workload without
// request_rate). When the body has a misspelling of such a name, the misspelling is the
// one mistake and this one its echo. Each group is satisfied by a misspelling of any of
// its names; the diagnostic is dropped when every group is.
type absent struct{ groups []absentGroup }

type absentGroup struct {
	names []string
	// body is the block body the names would be in; zero: the innermost body holding
	// the diagnostic's subject.
	body hcl.Range
}

// premise records on d that it holds only if body (zero: the subject's) lacks all of
// names; no names records nothing.
func premise(d *hcl.Diagnostic, body hcl.Range, names ...string) {
	if len(names) == 0 {
		return
	}
	a, _ := d.Extra.(absent)
	a.groups = append(a.groups, absentGroup{names, body})
	d.Extra = a
}

// strangeNames are the summaries of a name a body does not take: a misspelling, or a
// name that belongs elsewhere.
var strangeNames = []string{"Unsupported argument", "Unsupported block type", "Misplaced argument", "Misplaced block"}

// anyName, among a premise's names, is satisfied by any name the body does not take:
// an slo with a limit it does not know is not empty, it is misspelt.
const anyName = "?"

var missingArgument = regexp.MustCompile(`^The argument "([^"]+)" is required`)

// dropCascades removes the errors one misspelt name in a nested block causes on correct
// lines: a required argument "missing" beside its misspelling (target_attainment_pc), or
// a check that finds no slo block beside a block "sloo". Only the misspelling is kept.
//
// A syntax error inside a body counts as a misspelling of every name there: what the
// parser could not read is absent, and its absence is no mistake of its own.
func dropCascades(diags hcl.Diagnostics, files map[string]*hcl.File, syntax hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		name string
		body hcl.Range
	}
	typos := map[key]bool{}
	for _, d := range diags {
		if d.Subject == nil || !slices.Contains(strangeNames, d.Summary) {
			continue
		}
		if body, ok := enclosingBody(files, *d.Subject); ok {
			typos[key{anyName, body}] = true
		}
		// A misspelling may stand for any of the names offered.
		for _, meant := range suggest.Meant(d.Detail) {
			if body, ok := enclosingBody(files, *d.Subject); ok {
				typos[key{meant, body}] = true
			}
		}
	}
	for _, d := range syntax {
		if d.Subject == nil {
			continue
		}
		if body, ok := enclosingBody(files, *d.Subject); ok {
			typos[key{"*", body}] = true
		}
		if body, ok := bodyCutShort(files, *d.Subject); ok {
			typos[key{"*", body}] = true
		}
	}
	if len(typos) == 0 {
		return diags
	}
	kept := diags[:0:0]
	for _, d := range diags {
		if m := missingArgument.FindStringSubmatch(d.Detail); d.Summary == "Missing required argument" && m != nil && d.Subject != nil {
			if body, ok := enclosingBody(files, *d.Subject); ok && (typos[key{m[1], body}] || typos[key{"*", body}]) {
				continue
			}
		}
		if a, ok := d.Extra.(absent); ok && d.Subject != nil && len(a.groups) > 0 {
			echo := true
			for _, g := range a.groups {
				body, ok := g.body, true
				if body == (hcl.Range{}) {
					body, ok = enclosingBody(files, *d.Subject)
				}
				found := false
				for _, n := range g.names {
					found = found || ok && (typos[key{n, body}] || typos[key{"*", body}])
				}
				echo = echo && found
			}
			if echo {
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

// bodyCutShort is the body a syntax error at r cut short: the parser keeps such a body
// only up to the error, so it ends on r's line, before r.
func bodyCutShort(files map[string]*hcl.File, r hcl.Range) (hcl.Range, bool) {
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
	var walk func(*hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for _, blk := range b.Blocks {
			if blk.Body == nil {
				continue
			}
			sr := blk.Body.SrcRange
			if sr.End.Line == r.Start.Line && sr.Start.Byte <= r.Start.Byte && sr.End.Byte <= r.Start.Byte {
				found, ok = sr, true
			}
			walk(blk.Body)
		}
	}
	walk(body)
	return found, ok
}

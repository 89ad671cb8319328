package plan

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// Output is an `output "<kind>"` block: where apply writes results.
type Output struct {
	// Kind is one of the output kinds registered with ledger (report.Outputs lists
	// them): csv, jsonl, markdown, html or summary.
	Kind string
	// Path is absolute, resolved against the plan's directory.
	Path string
	// Language of headings: "en" (default) or "zh".
	Language string
	// Percentiles are the latency percentiles a report shows, out of stats.Percentiles
	// (the default, all of them); the CSV and JSONL keep every one.
	Percentiles []int
	DeclRange   hcl.Range
}

var outputLanguages = []string{"en", "zh"}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: ledger.OptionLanguage}, {Name: ledger.OptionPercentiles}},
}

func (l *loader) decodeOutputBlock(b *hcl.Block, ctx *hcl.EvalContext) *Output {
	kind := b.Labels[0]
	k, ok := ledger.LookupOutput(kind)
	if !ok {
		kinds := ledger.OutputNames("")
		l.errorf(b.LabelRanges[0].Ptr(), "Unknown output kind", "An output's kind is %s, not %q.%s", quoteList(kinds), kind, suggestion(kind, kinds))
		return nil
	}
	o := &Output{Kind: kind, Language: "en", DeclRange: b.DefRange}
	content, diags := b.Body.Content(outputSchema)
	l.add(diags)
	before := len(l.diags)
	path := k.DefaultPath
	if pa := content.Attributes["path"]; l.decode(pa, ctx, &path) {
		if info, err := os.Stat(l.resolvePath(path)); err == nil && info.IsDir() || strings.HasSuffix(path, "/") {
			l.errorf(pa.Expr.Range().Ptr(), "Output path is a directory",
				"An output writes one file, and %q names a directory. Did you mean %q?", path, filepath.Join(path, filepath.Base(k.DefaultPath)))
		}
	}
	o.Path = l.resolvePath(path)
	if a := content.Attributes[ledger.OptionLanguage]; l.takesOption(k, a) && l.decode(a, ctx, &o.Language) && !slices.Contains(outputLanguages, o.Language) {
		l.errorf(a.Expr.Range().Ptr(), "Invalid language", "language is %s, not %q.%s", quoteList(outputLanguages), o.Language, suggestion(o.Language, outputLanguages))
	}
	l.decodePercentiles(o, k, content.Attributes[ledger.OptionPercentiles], ctx)
	for _, prev := range l.p.Outputs {
		if prev.Path == o.Path {
			l.errorf(b.DefRange.Ptr(), "Duplicate output path", "Another output (at %s) already writes %s.", prev.DeclRange, o.Path)
		}
	}
	if hasErrorsSince(l.diags, before) {
		return nil
	}
	return o
}

// takesOption reports whether the block's attribute a is set and an option kind k
// takes; an option k does not take is an error.
func (l *loader) takesOption(k ledger.OutputKind, a *hcl.Attribute) bool {
	switch {
	case a == nil:
		return false
	case !slices.Contains(k.Options, a.Name):
		l.errorf(a.NameRange.Ptr(), "Unsupported argument", "%s is an option of the %s outputs only, not of %s.",
			a.Name, strings.Join(ledger.OutputNames(a.Name), " and "), k.Name)
		return false
	}
	return true
}

// decodePercentiles sets o.Percentiles from the block's percentiles list.
func (l *loader) decodePercentiles(o *Output, k ledger.OutputKind, a *hcl.Attribute, ctx *hcl.EvalContext) {
	o.Percentiles = append([]int(nil), stats.Percentiles...)
	if !l.takesOption(k, a) {
		return
	}
	var ps []int
	if !l.decode(a, ctx, &ps) {
		return
	}
	known := make([]string, len(stats.Percentiles))
	for i, p := range stats.Percentiles {
		known[i] = strconv.Itoa(p)
	}
	for i, p := range ps {
		switch {
		case !slices.Contains(stats.Percentiles, p):
			l.errorf(elemRange(a.Expr, i), "Unknown percentile", "percentiles lists some of %s (the ones every output keeps), not %d.", strings.Join(known[:len(known)-1], ", ")+" or "+known[len(known)-1], p)
		case slices.Index(ps, p) < i:
			l.errorf(elemRange(a.Expr, i), "Duplicate percentile", "p%d is listed twice.", p)
		}
	}
	if len(ps) == 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid percentiles", "percentiles needs at least one of %s.", quoteList(known))
	}
	o.Percentiles = ps
}

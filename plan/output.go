package plan

import (
	"maps"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/stats"
)

// Output is an `output "<kind>"` block: where apply writes results.
type Output struct {
	// Kind is csv, markdown or jsonl.
	Kind string
	// Path is absolute, resolved against the plan's directory.
	Path string
	// Language of headings: "en" (default) or "zh".
	Language string
	// Percentiles are the latency percentiles a markdown output shows (report.html
	// follows them too), out of stats.Percentiles (the default, all of them); the CSV
	// and JSONL keep every one.
	Percentiles []int
	DeclRange   hcl.Range
}

// OutputKinds are the kinds an output block may have, with their default paths.
var OutputKinds = map[string]string{
	"csv":      "results/results.csv",
	"markdown": "results/results.md",
	"jsonl":    "results/raw.jsonl",
}

var outputLanguages = []string{"en", "zh"}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "language"}, {Name: "percentiles"}},
}

func (l *loader) decodeOutputBlock(b *hcl.Block, ctx *hcl.EvalContext) *Output {
	kind := b.Labels[0]
	def, ok := OutputKinds[kind]
	if !ok {
		l.errorf(b.LabelRanges[0].Ptr(), "Unknown output kind", "An output's kind is %s, not %q.%s", quoteList(slices.Sorted(maps.Keys(OutputKinds))), kind, suggestion(kind, slices.Sorted(maps.Keys(OutputKinds))))
		return nil
	}
	o := &Output{Kind: kind, Language: "en", DeclRange: b.DefRange}
	content, diags := b.Body.Content(outputSchema)
	l.add(diags)
	before := len(l.diags)
	path := def
	l.decode(content.Attributes["path"], ctx, &path)
	o.Path = l.resolvePath(path)
	if a := content.Attributes["language"]; a != nil && l.decode(a, ctx, &o.Language) && !contains(outputLanguages, o.Language) {
		l.errorf(a.Expr.Range().Ptr(), "Invalid language", "language is %s, not %q.", quoteList(outputLanguages), o.Language)
	}
	l.decodePercentiles(o, content.Attributes["percentiles"], ctx)
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

// decodePercentiles sets o.Percentiles from a markdown output's percentiles list.
func (l *loader) decodePercentiles(o *Output, a *hcl.Attribute, ctx *hcl.EvalContext) {
	o.Percentiles = append([]int(nil), stats.Percentiles...)
	if a == nil {
		return
	}
	if o.Kind != "markdown" {
		l.errorf(a.NameRange.Ptr(), "Unsupported argument", "percentiles chooses what a markdown output shows; the %s output keeps every percentile.", o.Kind)
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
			l.errorf(elemRange(a.Expr, i), "Unknown percentile", "percentiles lists some of %s (the ones every output keeps), not %d.", quoteList(known), p)
		case slices.Index(ps, p) < i:
			l.errorf(elemRange(a.Expr, i), "Duplicate percentile", "p%d is listed twice.", p)
		}
	}
	if len(ps) == 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid percentiles", "percentiles needs at least one of %s.", quoteList(known))
	}
	o.Percentiles = ps
}

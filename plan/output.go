package plan

import (
	"github.com/hashicorp/hcl/v2"
)

// Output is an `output "<kind>"` block: where apply writes results.
type Output struct {
	// Kind is csv, markdown or jsonl.
	Kind string
	// Path is absolute, resolved against the plan's directory.
	Path string
	// Language of headings: "en" (default) or "zh".
	Language  string
	DeclRange hcl.Range
}

// OutputKinds are the kinds an output block may have, with their default paths.
var OutputKinds = map[string]string{
	"csv":      "results/results.csv",
	"markdown": "results/results.md",
	"jsonl":    "results/raw.jsonl",
}

var outputLanguages = []string{"en", "zh"}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "language"}},
}

func (l *loader) decodeOutputBlock(b *hcl.Block, ctx *hcl.EvalContext) *Output {
	kind := b.Labels[0]
	def, ok := OutputKinds[kind]
	if !ok {
		l.errorf(b.LabelRanges[0].Ptr(), "Unknown output kind", "An output's kind is %s, not %q.%s", quoteList(keys(OutputKinds)), kind, suggestion(kind, keys(OutputKinds)))
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

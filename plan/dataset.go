package plan

import (
	"os"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
	"github.com/zclconf/go-cty/cty"
)

// Dataset is a `dataset "<name>"` block: a file of prompts or trace rows that workloads
// name with dataset = dataset.<name>. The plan only checks that the file exists; its
// rows are read (and a malformed one reported with file:line) before any request is sent.
type Dataset struct {
	Name string
	// Spec is how to read the file; its Path is already resolved against the plan.
	Spec      dataset.Spec
	DeclRange hcl.Range
	// BlockSize is the tokens each hash id of a mooncake trace stands for (block_size;
	// 0: executor.DefaultBlockSize, Mooncake's 512).
	BlockSize int
}

var datasetSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "format", Required: true}, {Name: "path", Required: true},
		{Name: "prompt_field"}, {Name: "output_tokens_field"}, {Name: "prompt_words"},
		{Name: "min_prompt_words"}, {Name: "max_prompt_words"}, {Name: "block_size"},
	},
}

// defaultTextWords is the length of a prompt cut from a text corpus without prompt_words.
const defaultTextWords = 100

func (d *Dataset) object() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"ref":    cty.StringVal("dataset." + d.Name),
		"name":   cty.StringVal(d.Name),
		"format": cty.StringVal(d.Spec.Format),
	})
}

func (l *loader) decodeDatasetBlock(b *hcl.Block, ctx *hcl.EvalContext) *Dataset {
	name := b.Labels[0]
	if !validName(name) {
		return nil
	}
	for _, prev := range l.p.Datasets {
		if prev.Name == name {
			return nil
		}
	}
	d := &Dataset{Name: name, Spec: dataset.Spec{TextWords: defaultTextWords}, DeclRange: b.DefRange}
	content, diags := b.Body.Content(datasetSchema)
	l.add(diags)
	before := len(l.diags)
	a := content.Attributes
	l.add(nullArg(a["format"], ctx, "it is one of "+quoteList(dataset.Formats)))
	l.add(nullArg(a["path"], ctx, "it names the dataset's file"))
	if f := a["format"]; f != nil && l.decode(f, ctx, &d.Spec.Format) && !slices.Contains(dataset.Formats, d.Spec.Format) {
		l.errorf(f.Expr.Range().Ptr(), "Unknown dataset format", "format is %s, not %q.%s",
			quoteList(dataset.Formats), d.Spec.Format, suggestion(d.Spec.Format, dataset.Formats))
	}
	if p := a["path"]; p != nil && l.decode(p, ctx, &d.Spec.Path) {
		given := d.Spec.Path
		d.Spec.Path = l.resolvePath(d.Spec.Path)
		l.add(datasetFile(p, d.Spec.Path, given, l.p.Dir))
	}
	l.decode(a["prompt_field"], ctx, &d.Spec.PromptField)
	l.decode(a["output_tokens_field"], ctx, &d.Spec.OutputTokensField)
	for _, w := range []struct {
		name string
		dst  *int
		min  int
	}{{"prompt_words", &d.Spec.TextWords, 1}, {"min_prompt_words", &d.Spec.MinPromptWords, 0}, {"max_prompt_words", &d.Spec.MaxPromptWords, 0}} {
		if at := a[w.name]; l.decode(at, ctx, w.dst) && *w.dst < w.min {
			l.errorf(at.Expr.Range().Ptr(), "Invalid "+w.name, "%s must be at least %d, not %d.", w.name, w.min, *w.dst)
		}
	}
	l.decodeBlockSize(d, a["block_size"], ctx)
	l.add(promptWordRange(d, a))
	if hasErrorsSince(l.diags, before) {
		return standIn(l, d)
	}
	if !diags.HasErrors() && slices.Contains(dataset.Formats, d.Spec.Format) { // a misspelt argument: one error
		l.add(scanDataset(d, a["path"]))
	}
	return d
}

// datasetFile reports a dataset path (resolved from given, in the plan's dir) that names
// no readable file, on the path attribute p.
func datasetFile(p *hcl.Attribute, path, given, dir string) hcl.Diagnostics {
	var r report
	if info, err := os.Stat(path); err != nil {
		r.errorf(p.Expr.Range().Ptr(), "Cannot read dataset", "%s (relative paths are from the plan's directory).%s", err, pathSuggestion(given, dir))
	} else if info.IsDir() {
		r.errorf(p.Expr.Range().Ptr(), "Cannot read dataset", "%s is a directory; path names the dataset's file (relative paths are from the plan's directory).", path)
	}
	return r.diags
}

// promptWordRange reports a min_prompt_words above max_prompt_words: no row could pass.
func promptWordRange(d *Dataset, a hcl.Attributes) hcl.Diagnostics {
	var r report
	if lo, hi := d.Spec.MinPromptWords, d.Spec.MaxPromptWords; hi > 0 && lo > hi {
		r.errorf(a["max_prompt_words"].Expr.Range().Ptr(), "Invalid max_prompt_words", "max_prompt_words (%d) is below min_prompt_words (%d): no row could pass.", hi, lo)
	}
	return r.diags
}

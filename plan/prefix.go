package plan

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
)

// Prefix is a workload's `prefix { tokens = N, groups = G }` block: request n of a run
// belongs to group n % G, and every request of a group starts with the same N-token
// prefix, inside its prompt length, so a prefix-caching server can reuse it.
type Prefix struct {
	Tokens, Groups int
	DeclRange      hcl.Range
}

var prefixSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "tokens", Required: true}, {Name: "groups"}},
}

// decodePrefixBlocks reads a workload's prefix block once its lengths and prompt are
// decoded: the prefix must fit inside the shortest prompt, and it cannot go with a
// prompt of its own text or with lengths a dataset's rows give.
func (l *loader) decodePrefixBlocks(w *Workload, blocks hcl.Blocks, ctx *hcl.EvalContext) {
	for i, b := range blocks {
		if i > 0 {
			l.errorf(b.DefRange.Ptr(), "Duplicate prefix block", "A workload has one prefix block; the first is at %s.", blocks[0].DefRange)
			continue
		}
		content, diags := b.Body.Content(prefixSchema)
		l.add(diags)
		a := content.Attributes
		p := &Prefix{Groups: 1, DeclRange: b.DefRange}
		for _, x := range []struct {
			name string
			dst  *int
		}{{"tokens", &p.Tokens}, {"groups", &p.Groups}} {
			if l.decode(a[x.name], ctx, x.dst) && *x.dst < 1 {
				l.errorf(a[x.name].Expr.Range().Ptr(), "Invalid prefix "+x.name, "%s must be at least 1, not %d.", x.name, *x.dst)
			}
		}
		at := b.DefRange.Ptr()
		if t := a["tokens"]; t != nil {
			at = t.Expr.Range().Ptr()
		}
		shortest := w.PromptLength.Value
		if w.PromptLength.Kind != dataset.LengthFixed {
			shortest = w.PromptLength.Min
		}
		switch {
		case w.Prompt != "":
			l.errorf(b.DefRange.Ptr(), "Conflicting arguments", "A prompt or prompt_file is the request's whole text: a prefix block builds prompts of filler and cannot go with it.")
		case w.PromptLength.Kind == dataset.LengthDataset:
			l.errorf(b.DefRange.Ptr(), "Conflicting arguments", "prompt_tokens = \"dataset\" takes each prompt from its row (a Mooncake row's hash_ids already share blocks): a prefix block cannot go with it.")
		case w.SharedPrefix:
			l.errorf(b.DefRange.Ptr(), "Conflicting arguments", "shared_prefix = true already gives every request the same prompt: leave it out with a prefix block.")
		case p.Tokens >= shortest && p.Tokens > 0:
			l.errorf(at, "Prefix longer than the prompt", "The prefix of %d tokens is part of the prompt, whose shortest length is %d tokens: a prefix must be shorter.", p.Tokens, shortest)
		}
		w.Prefix = p
	}
}

// decodeBlockSize reads a dataset's block_size: the tokens each of a Mooncake row's
// hash_ids stands for.
func (l *loader) decodeBlockSize(d *Dataset, a *hcl.Attribute, ctx *hcl.EvalContext) {
	if !l.decode(a, ctx, &d.BlockSize) {
		return
	}
	switch {
	case d.BlockSize < 1:
		l.errorf(a.Expr.Range().Ptr(), "Invalid block_size", "block_size is the tokens per hash id, at least 1, not %d.", d.BlockSize)
	case d.Spec.Format != dataset.FormatMooncake:
		l.errorf(a.NameRange.Ptr(), "Unexpected block_size", "block_size is the tokens per hash id of a mooncake trace; format %q has no hash ids.", d.Spec.Format)
	}
}

package plan

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/dataset"
)

// Embeddings is a workload's embeddings block: the workload sends embeddings requests (to
// a backend with api = "embeddings") over two axes, inputs per request and input length.
type Embeddings struct {
	// Inputs are the levels of inputs per request (the batch), each its own row.
	Inputs []int
	// InputTokens are the levels of input length in tokens (as filler words the server
	// counts; its own count is reported), each its own row.
	InputTokens []int
	DeclRange   hcl.Range
}

var embeddingsSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "inputs"}, {Name: "input_tokens"}}}

// decodeEmbeddings reads the embeddings block, if any, and refuses the generation
// attributes that mean nothing for it.
func (l *loader) decodeEmbeddings(w *Workload, blocks hcl.Blocks, a hcl.Attributes, ctx *hcl.EvalContext) {
	for i, b := range blocks {
		if i > 0 {
			l.errorf(b.DefRange.Ptr(), "Duplicate embeddings block", "A workload has one embeddings block (the first is at %s).", blocks[0].DefRange)
			continue
		}
		content, diags := b.Body.Content(embeddingsSchema)
		l.add(diags)
		e := &Embeddings{Inputs: []int{1}, InputTokens: []int{w.PromptTokens}, DeclRange: b.DefRange}
		if v, ok := l.levelList(content.Attributes["inputs"], ctx, "inputs", "inputs level"); ok {
			e.Inputs = v
		}
		if v, ok := l.levelList(content.Attributes["input_tokens"], ctx, "input_tokens", "input_tokens level"); ok {
			e.InputTokens = v
		}
		for _, name := range []string{"max_tokens", "stream", "reasoning_effort", "think", "prompt", "prompt_file", "dataset", "shared_prefix", "request_rate"} {
			if at := a[name]; at != nil {
				l.errorf(at.NameRange.Ptr(), "Conflicting arguments", "%s cannot be used with an embeddings block (at %s): an embeddings request generates nothing and takes filler inputs of input_tokens tokens.", name, b.DefRange)
			}
		}
		w.Embeddings = e
		// Nothing is generated: no output length, and the answer is one JSON object.
		w.MaxTokens, w.OutputLength, w.Stream, w.ForceMaxTokens = 0, dataset.Fixed(0), false, false
	}
}

// checkEmbeddingsBackends refuses a cell whose workload and backend disagree on
// embeddings: an embeddings workload needs a backend with api = "embeddings", and such a
// backend serves nothing else.
func checkEmbeddingsBackends(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, c := range cells {
		if c.Backend == nil {
			continue
		}
		embed := c.Backend.API == backends.EmbeddingsAPI
		switch {
		case c.Workload.Embeddings != nil && !embed:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Embeddings workload on a generation endpoint",
				Detail: fmt.Sprintf("Workload %q has an embeddings block, but backend %s uses api = %q (cell %s). Give the backend api = \"embeddings\" (an openai or ollama backend), or exclude the pair in the matrix.",
					c.Workload.Name, c.Backend.Addr, c.Backend.API, c.ID),
				Subject: c.Workload.Embeddings.DeclRange.Ptr(),
			})
		case c.Workload.Embeddings == nil && embed:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Generation workload on an embeddings endpoint",
				Detail: fmt.Sprintf("Backend %s uses api = \"embeddings\", which generates nothing, but workload %q has no embeddings block (cell %s). Add an embeddings block to the workload, or exclude the pair in the matrix.",
					c.Backend.Addr, c.Workload.Name, c.ID),
				Subject: c.Workload.DeclRange.Ptr(),
			})
		}
	}
	return diags
}

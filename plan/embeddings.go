package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
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
	for _, g := range cellsByWorkload(cells, func(c *Cell) bool {
		return c.Backend != nil && c.Backend.API != "" && c.Workload.Embeddings != nil && c.Backend.API != backends.EmbeddingsAPI
	}) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Embeddings workload on a generation endpoint",
			Detail: fmt.Sprintf("Workload %q has an embeddings block, but %s (cells %s). Give each backend api = \"embeddings\" (an openai or ollama backend), or exclude the pair in the matrix.",
				g.w.Name, g.backendsAPI(), g.cellList()),
			Subject: g.w.Embeddings.DeclRange.Ptr(),
		})
	}
	for _, g := range cellsByWorkload(cells, func(c *Cell) bool {
		return c.Backend != nil && c.Workload.Embeddings == nil && c.Backend.API == backends.EmbeddingsAPI
	}) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Generation workload on an embeddings endpoint",
			Detail: fmt.Sprintf("%s, which generates nothing, but workload %q has no embeddings block (cells %s). Add an embeddings block to the workload, or exclude the pair in the matrix.",
				upperFirst(g.backendsAPI()), g.w.Name, g.cellList()),
			Subject: g.w.DeclRange.Ptr(),
		})
		premise(diags[len(diags)-1], g.w.body, "embeddings") // a misspelt embeddings block says it
	}
	return diags
}

// workloadCells are the cells of one workload that a check picked, and their backends,
// so one diagnostic on the workload names every backend it applies to.
type workloadCells struct {
	w        *Workload
	backends []*Backend
	ids      []string
}

// cellsByWorkload groups the picked cells by workload, in cell order.
func cellsByWorkload(cells []*Cell, pick func(*Cell) bool) []*workloadCells {
	var out []*workloadCells
	by := map[*Workload]*workloadCells{}
	for _, c := range cells {
		if !pick(c) {
			continue
		}
		g := by[c.Workload]
		if g == nil {
			g = &workloadCells{w: c.Workload}
			by[c.Workload] = g
			out = append(out, g)
		}
		if !slices.Contains(g.backends, c.Backend) {
			g.backends = append(g.backends, c.Backend)
		}
		g.ids = append(g.ids, c.ID)
	}
	return out
}

// backendsAPI is "backend openai.v uses api = \"chat\"", or the same for several.
func (g *workloadCells) backendsAPI() string {
	var parts []string
	for _, b := range g.backends {
		parts = append(parts, fmt.Sprintf("%s uses api = %q", b.Addr, b.API))
	}
	word := "backend "
	if len(parts) > 1 {
		word = "backends "
	}
	return word + strings.Join(parts, ", ")
}

// cellList names up to three cells, and how many more.
func (g *workloadCells) cellList() string {
	if len(g.ids) <= 3 {
		return strings.Join(g.ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(g.ids[:3], ", "), len(g.ids)-3)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

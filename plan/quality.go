package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/zclconf/go-cty/cty"
)

// Quality is a matrix's `quality { }` block: each cell's output drift against a
// reference, measured in a phase of its own at concurrency 1 before its timed levels.
// The reference is a quantization of the same model on the same tool, hardware and
// workload (reference = "f16"), or a named cell (reference = "matrix/model/...").
type Quality struct {
	// Reference is as written; a cell's own reference cell is Cell.QualityReference.
	Reference      string
	ReferenceRange hcl.Range
	// Prompts is the number of prompts; PromptWords the length of each built-in prompt
	// (seeded common words), unless Dataset names the file they are drawn from.
	Prompts, PromptWords int
	Dataset              *Dataset
	datasetName          string
	datasetRange         hcl.Range
	// MaxTokens is the reference's continuation length: the positions compared.
	MaxTokens int
	// TopLogProbs is the log-probabilities asked per position (1–20: Ollama's and
	// vLLM's default limit).
	TopLogProbs int
	// Seed seeds the built-in prompts (and a dataset's draw) and every request's
	// sampler; decoding is greedy (temperature 0).
	Seed int64
	// Method is QualityAuto, QualityFollow or QualityTeacher (ledger's methods).
	Method    string
	Accuracy  *QualityAccuracy
	DeclRange hcl.Range
}

// QualityAccuracy is a quality block's `accuracy { }`: the plan's own prompts with
// expected answers, scored on each cell's greedy answer.
type QualityAccuracy struct {
	// Path is a JSONL file: {"prompt": ..., "answer": ..., "choices": [...]}, one a line.
	Path string
	// Scorer is "exact" (the answer, trimmed, case folded), "regex" (answer is a regular
	// expression the output must match) or "choice" (of the line's choices, the one the
	// output names first is the answer).
	Scorer    string
	MaxTokens int
	DeclRange hcl.Range
}

// Quality methods a plan may ask for: QualityAuto uses prompt log-probabilities where
// the server gives them (teacher) and follows otherwise.
const (
	QualityAuto    = "auto"
	QualityFollow  = "follow"
	QualityTeacher = "teacher"
)

// QualityMethods and QualityScorers are the values a quality block accepts.
var (
	QualityMethods = []string{QualityAuto, QualityFollow, QualityTeacher}
	QualityScorers = []string{"exact", "regex", "choice"}
)

// maxTopLogProbs is the most log-probabilities per position Ollama takes (0–20) and
// vLLM serves by default (--max-logprobs 20).
const maxTopLogProbs = 20

var qualitySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "reference", Required: true}, {Name: "prompts"}, {Name: "prompt_words"}, {Name: "dataset"},
		{Name: "max_tokens"}, {Name: "top_logprobs"}, {Name: "seed"}, {Name: "method"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "accuracy"}},
}

var accuracySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "path", Required: true}, {Name: "scorer", Required: true}, {Name: "max_tokens"}},
}

// decodeQualityBlock reads a matrix's quality block; dir resolves the accuracy file's
// path. The reference and the dataset are resolved against the cells by resolveQuality.
func decodeQualityBlock(b *hcl.Block, ctx *hcl.EvalContext, dir string) (*Quality, hcl.Diagnostics) {
	q := &Quality{Prompts: 16, PromptWords: 12, MaxTokens: 16, TopLogProbs: 5, Seed: 1, Method: QualityAuto, DeclRange: b.DefRange}
	content, diags := b.Body.Content(qualitySchema)
	a := content.Attributes
	if at := a["reference"]; decodeLeaf(at, ctx, &q.Reference, &diags) {
		q.ReferenceRange = at.Expr.Range()
		if q.Reference == "" {
			diags = append(diags, errorAt(at, "Empty quality reference", "reference names a quantization of this matrix (\"f16\") or a cell id."))
		}
	}
	for _, n := range []struct {
		name     string
		dst      *int
		min, max int
	}{
		{"prompts", &q.Prompts, 1, 10000}, {"prompt_words", &q.PromptWords, 1, 2000},
		{"max_tokens", &q.MaxTokens, 1, 4096}, {"top_logprobs", &q.TopLogProbs, 1, maxTopLogProbs},
	} {
		if at := a[n.name]; decodeLeaf(at, ctx, n.dst, &diags) && (*n.dst < n.min || *n.dst > n.max) {
			diags = append(diags, errorAt(at, "Invalid "+n.name, fmt.Sprintf("%s must be %d to %d, not %d.", n.name, n.min, n.max, *n.dst)))
		}
	}
	decodeLeaf(a["seed"], ctx, &q.Seed, &diags)
	if at := a["method"]; decodeLeaf(at, ctx, &q.Method, &diags) && !slices.Contains(QualityMethods, q.Method) {
		diags = append(diags, errorAt(at, "Unknown quality method",
			fmt.Sprintf("method is %s, not %q.%s", quoteList(QualityMethods), q.Method, suggestion(q.Method, QualityMethods))))
	}
	if at := a["dataset"]; at != nil {
		v, d := at.Expr.Value(ctx)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if name, ok := datasetRefName(v); ok {
				q.datasetName, q.datasetRange = name, at.Expr.Range()
			} else {
				diags = append(diags, errorAt(at, "Invalid quality dataset", "dataset names a dataset block: dataset = dataset.<name>."))
			}
		}
	}
	for i, blk := range content.Blocks {
		if i > 0 {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate accuracy block",
				Detail: fmt.Sprintf("A quality block has one accuracy block; the first is at %s.", content.Blocks[0].DefRange), Subject: blk.DefRange.Ptr()})
			continue
		}
		acc, d := decodeAccuracyBlock(blk, ctx, dir)
		diags = append(diags, d...)
		q.Accuracy = acc
	}
	return q, diags
}

func decodeAccuracyBlock(b *hcl.Block, ctx *hcl.EvalContext, dir string) (*QualityAccuracy, hcl.Diagnostics) {
	acc := &QualityAccuracy{MaxTokens: 32, DeclRange: b.DefRange}
	content, diags := b.Body.Content(accuracySchema)
	a := content.Attributes
	if at := a["path"]; decodeLeaf(at, ctx, &acc.Path, &diags) {
		given := acc.Path
		if !filepath.IsAbs(acc.Path) {
			acc.Path = filepath.Join(dir, acc.Path)
		}
		if info, err := os.Stat(acc.Path); err != nil || info.IsDir() {
			why := fmt.Sprintf("%s is a directory", acc.Path)
			if err != nil {
				why = err.Error()
			}
			diags = append(diags, errorAt(at, "Cannot read accuracy file",
				why+"; path names a JSONL file of {\"prompt\", \"answer\"} lines (relative paths are from the plan's directory)."+pathSuggestion(given, dir)))
		}
	}
	if at := a["scorer"]; decodeLeaf(at, ctx, &acc.Scorer, &diags) && !slices.Contains(QualityScorers, acc.Scorer) {
		diags = append(diags, errorAt(at, "Unknown scorer",
			fmt.Sprintf("scorer is %s, not %q.%s", quoteList(QualityScorers), acc.Scorer, suggestion(acc.Scorer, QualityScorers))))
	}
	if at := a["max_tokens"]; decodeLeaf(at, ctx, &acc.MaxTokens, &diags) && (acc.MaxTokens < 1 || acc.MaxTokens > 4096) {
		diags = append(diags, errorAt(at, "Invalid max_tokens", fmt.Sprintf("max_tokens must be 1 to 4096, not %d.", acc.MaxTokens)))
	}
	if !diags.HasErrors() {
		if d := scanAccuracy(acc, a["path"]); d != nil {
			diags = append(diags, d)
		}
	}
	return acc, diags
}

// decodeLeaf evaluates an attribute into a Go leaf value; false (target unchanged) when
// it is absent, null or wrong, the mistake appended to diags.
func decodeLeaf(a *hcl.Attribute, ctx *hcl.EvalContext, target any, diags *hcl.Diagnostics) bool {
	if a == nil {
		return false
	}
	v, d := a.Expr.Value(ctx)
	if !d.HasErrors() && v.IsNull() {
		return false
	}
	if d.HasErrors() || !v.IsWhollyKnown() {
		*diags = append(*diags, d...)
		return false
	}
	if d := checkSuits(a, ctx, v, target); d.HasErrors() { // "Invalid <name>", with a hint
		*diags = append(*diags, d...)
		return false
	}
	d = gohcl.DecodeExpression(hcl.StaticExpr(v, a.Expr.Range()), nil, target)
	for _, x := range d {
		x.Subject = a.Expr.Range().Ptr()
	}
	*diags = append(*diags, d...)
	return !d.HasErrors()
}

func errorAt(a *hcl.Attribute, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: a.Expr.Range().Ptr()}
}

// datasetRefName is the name of a dataset block's object (Dataset.object), as a
// reference dataset.<name> evaluates.
func datasetRefName(v cty.Value) (string, bool) {
	if !v.IsKnown() || v.IsNull() || !v.Type().IsObjectType() || !v.Type().HasAttribute("ref") || !v.Type().HasAttribute("name") {
		return "", false
	}
	n := v.GetAttr("name")
	if n.Type() != cty.String || !n.IsKnown() || n.IsNull() {
		return "", false
	}
	return n.AsString(), true
}

// resolveQuality gives each cell of a matrix with a quality block its block and its
// reference cell's id, and checks that the reference exists and runs first (its
// continuations are what the others follow).
func resolveQuality(p *Plan, cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	index := make(map[string]int, len(cells))
	for i, c := range cells {
		index[c.ID] = i
	}
	for _, m := range p.Matrices {
		q := m.Quality
		if q == nil {
			continue
		}
		if q.datasetName != "" && q.Dataset == nil {
			for _, d := range p.Datasets {
				if d.Name == q.datasetName {
					q.Dataset = d
				}
			}
		}
		reported := false
		for i, c := range cells {
			if c.Matrix != m.Name {
				continue
			}
			ref := q.Reference
			if slices.Contains(m.Quantizations, q.Reference) {
				ref = m.cell(c.Model, q.Reference, c.Backend, c.Hardware, c.Workload).ID
			} else if _, ok := index[ref]; !ok && !reported {
				reported = true
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown quality reference",
					Detail: fmt.Sprintf("reference is a quantization of matrix %q (%s) or a cell id; %q is neither.%s",
						m.Name, quoteList(m.Quantizations), q.Reference, suggestion(q.Reference, append(slices.Clone(m.Quantizations), cellIDs(cells)...))),
					Subject: q.ReferenceRange.Ptr()})
			}
			j, ok := index[ref]
			switch {
			case reported:
			case !ok && !reported:
				reported = true
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Quality reference excluded",
					Detail:  fmt.Sprintf("Cell %s would be compared with %s, which the matrix's excludes remove.", c.ID, ref),
					Subject: q.ReferenceRange.Ptr()})
			case j > i && !reported:
				reported = true
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Quality reference runs later",
					Detail: fmt.Sprintf("Cell %s is compared with %s, which runs after it: the reference's continuations come first. List %q first.",
						c.ID, ref, q.Reference),
					Subject: q.ReferenceRange.Ptr()})
			case ok:
				c.Quality, c.QualityReference = q, ref
			}
		}
	}
	return diags
}

func cellIDs(cells []*Cell) []string {
	ids := make([]string, len(cells))
	for i, c := range cells {
		ids[i] = c.ID
	}
	return ids
}

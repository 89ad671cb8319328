package traffic

import (
	"cmp"
	"math"
	"strings"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// maxRequests is the most requests one run of the workload sends, at any level.
func maxRequests(w *plan.Workload) int {
	n := 1
	for _, l := range w.Levels() {
		n = max(n, w.RequestsPerRun(l.Concurrency))
	}
	return n
}

// seed is the workload's seed, 0 when it sets none.
func seed(w *plan.Workload) int64 {
	if w.Seed != nil {
		return *w.Seed
	}
	return 0
}

// corpus is a text dataset's drawn words, which prompts of drawn lengths are cut from;
// nil for other formats.
func corpus(w *plan.Workload, sample dataset.Sample) []string {
	if w.Dataset == nil || w.Dataset.Spec.Format != dataset.FormatText {
		return nil
	}
	var words []string
	for _, r := range sample.Rows[:min(len(sample.Rows), maxRequests(w))] {
		words = append(words, strings.Fields(r.Prompt)...)
	}
	return words
}

// hasShapes says whether the workload's requests differ from one another in length.
func hasShapes(w *plan.Workload) bool {
	return w.Dataset != nil || w.PromptLength.Kind != dataset.LengthFixed || w.OutputLength.Kind != dataset.LengthFixed ||
		w.Prefix != nil
}

// DrawShapes draws each request's prompt and output length, seeded by the workload's
// seed, from its distributions or its dataset rows. A dataset row's text is the prompt
// only with prompt_tokens = "dataset" (a Mooncake row gives a length, built as filler);
// otherwise the prompt is filler of the drawn length, or a text corpus cut to it. A
// Mooncake row's hash_ids become shared blocks, and a prefix block puts the request in
// its group (prefixShape).
func DrawShapes(w *plan.Workload, sample dataset.Sample) []executor.Shape {
	n := maxRequests(w)
	draws := dataset.NewLengths(seed(w))
	out := make([]executor.Shape, n)
	offset := 0
	for i := range out {
		var row dataset.Row
		if len(sample.Rows) > 0 {
			row = sample.Rows[i%len(sample.Rows)]
		}
		sh := &out[i]
		sh.Offset, offset = offset, offset+row.PromptWords // a corpus request starts at its own row
		switch {
		case w.PromptLength.Kind == dataset.LengthDataset && row.Prompt != "":
			sh.Text = row.Prompt
		case w.PromptLength.Kind == dataset.LengthDataset:
			sh.PromptTokens = cmp.Or(row.InputLength, w.PromptTokens)
			sh.HashIDs = row.HashIDs
		case w.PromptLength.Kind != dataset.LengthFixed:
			sh.PromptTokens = draws.Next(w.PromptLength, 0)
		}
		prefixShape(w, i, sh)
		rowOut := row.OutputTokens
		if rowOut == 0 && row.OutputWords > 0 {
			// ShareGPT gives the answer's text: about 4/3 tokens per English word.
			rowOut = int(math.Round(float64(row.OutputWords) * 4 / 3))
		}
		if w.OutputLength.Kind == dataset.LengthDataset {
			sh.MaxTokens = cmp.Or(rowOut, w.MaxTokens)
		} else {
			sh.MaxTokens = draws.Next(w.OutputLength, 0)
		}
	}
	return out
}

// LongestRequest is the prompt and output tokens of the workload's longest request, as
// its shapes drew them (a shape's zero lengths are the workload's own): a session's
// last turn carries its earlier turns too. A dataset row's text, like the plan's own
// prompt text, has no token count before the server counts it: it adds no prompt tokens.
func LongestRequest(w *plan.Workload, shapes []executor.Shape) (in, out int) {
	fixedPrompt := w.PromptTokens
	if w.Prompt != "" {
		fixedPrompt = 0 // the plan's own text: its length is the server's to count
	}
	in, out = fixedPrompt, w.MaxTokens
	for _, sh := range shapes {
		p := sh.PromptTokens
		if p == 0 && sh.Text == "" {
			p = fixedPrompt
		}
		if o := cmp.Or(sh.MaxTokens, w.MaxTokens); p+o > in+out {
			in, out = p, o
		}
	}
	return sessionPrompt(w, in, out), out
}

// FillerRange is the shortest and longest prompt, in tokens, built of filler of a drawn
// length (a prefix is built as filler too, so the shortest may be a prefix); 0, 0 when
// no request's prompt is filler of a drawn length.
func FillerRange(shapes []executor.Shape) (lo, hi int) {
	for _, sh := range shapes {
		if sh.Text == "" && sh.PromptTokens > 0 {
			short := sh.PromptTokens
			if sh.PrefixTokens > 0 {
				short = min(short, sh.PrefixTokens) // a prefix is built with the fit too: the probes span it
			}
			if lo == 0 || short < lo {
				lo = short
			}
			hi = max(hi, sh.PromptTokens)
		}
	}
	return lo, hi
}

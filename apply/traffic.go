package apply

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/dataset"
	"github.com/planrun/planrun/executor"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
)

// readDatasets draws every workload's dataset rows before anything is sent: a malformed
// row or an empty file stops the run with file:line, and each dataset's SHA-256 and
// row count go into the manifest.
func (a *applier) readDatasets() error {
	a.traffic = map[*plan.Workload]dataset.Sample{}
	a.replays = map[*plan.Workload]*replayWindow{}
	for _, c := range a.o.Cells {
		w := c.Workload
		if _, done := a.traffic[w]; done || w.Dataset == nil {
			continue
		}
		var s dataset.Sample
		var err error
		if w.Replay != nil {
			s, err = a.scanTrace(w) // streamed again while it is sent, never drawn whole
		} else {
			s, err = dataset.Draw(w.Dataset.Spec, maxRequests(w), workloadSeed(w))
		}
		if err != nil {
			return fmt.Errorf("dataset %q: %w", w.Dataset.Name, err)
		}
		a.traffic[w] = s
		setIn(&a.manifest.Datasets, w.Dataset.Name, report.DatasetRun{Path: w.Dataset.Spec.Path, Format: w.Dataset.Spec.Format,
			SHA256: s.Info.SHA256, Rows: s.Info.Rows, Kept: s.Info.Kept})
		if s.Note != "" {
			a.note("workload %q: %s", w.Name, s.Note)
		}
	}
	return nil
}

// maxRequests is the most requests one run of the workload sends, at any level.
func maxRequests(w *plan.Workload) int {
	n := 1
	for _, l := range w.Levels() {
		n = max(n, w.RequestsPerRun(l.Concurrency))
	}
	return n
}

// workloadSeed is the workload's seed, 0 when it sets none.
func workloadSeed(w *plan.Workload) int64 {
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

// shapes draws each request's prompt and output length, seeded by the workload's seed,
// from its distributions or its dataset rows. A dataset row's text is the prompt only
// with prompt_tokens = "dataset" (a Mooncake row gives a length, built as filler);
// otherwise the prompt is filler of the drawn length, or a text corpus cut to it. A
// Mooncake row's hash_ids become shared blocks, and a prefix block puts the request in
// its group (prefixShape).
func shapes(w *plan.Workload, sample dataset.Sample) []executor.Shape {
	n := maxRequests(w)
	draws := dataset.NewLengths(workloadSeed(w))
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

// calibrate matches the cell's prompts to the server's own token count: one calibrated
// filler length for a fixed prompt_tokens, and for drawn lengths a tokens-per-word fit
// (fitShapes). Its Note, which goes on the cell's rows, says how well that went, whether
// a small dataset wrapped, and that non-streamed requests have no TTFT.
func (a *applier) calibrate(ctx context.Context, cell *plan.Cell, setup *cellSetup) executor.Calibration {
	w := cell.Workload
	cal := executor.Calibration{Requested: w.PromptTokens}
	if e := w.Embeddings; e != nil {
		// Each input is built to its level's length with a tokens-per-word fit of the
		// server's own count of single inputs.
		setup.prompts.Fit = executor.FitTokens(ctx, setup.backend, setup.tmpl, setup.prompts, slices.Min(e.InputTokens), slices.Max(e.InputTokens))
		a.info("%s: %s", cell.ID, setup.prompts.Fit)
		return executor.Calibration{Note: "inputs built with " + setup.prompts.Fit.String()}
	}
	if w.PromptLength.Kind == dataset.LengthFixed {
		cal = executor.Calibrate(ctx, setup.backend, setup.tmpl, setup.prompts, w.PromptTokens)
		if cal.Actual > 0 {
			a.info("%s: prompt calibrated to %d tokens by the server's count (requested %d, %d words, %d probes)%s",
				cell.ID, cal.Actual, cal.Requested, cal.Words, cal.Probes, noteSuffix(cal.Note))
		} else {
			a.note("%s: prompt not calibrated: %s", cell.ID, cal.Note)
		}
	}
	notes := []string{cal.Note, a.traffic[w].Note}
	if !w.Stream {
		notes = append(notes, "non-streamed requests (stream = false): TTFT, TPOT and ITL unavailable")
	}
	if note := fitShapes(ctx, setup, setup.shapes); note != "" { // "" without drawn filler lengths
		a.info("%s: %s", cell.ID, note)
		notes = append(notes, note)
	}
	cal.Note = strings.Join(slices.DeleteFunc(notes, func(s string) bool { return s == "" }), "; ")
	return cal
}

// checkContext refuses a cell whose longest request, prompt and output as drawn, is past
// the model's context as the server states it (vLLM's max_model_len), before anything is
// sent: such requests would only fail one by one. A dataset row's text has no token
// count yet, so only its output length is held to the limit.
func checkContext(ctx context.Context, cell *plan.Cell, setup *cellSetup) error {
	cl, ok := setup.backend.(backends.ContextLimiter)
	if !ok {
		return nil
	}
	limit, ok := cl.ContextLength(ctx, cell.ModelID)
	if !ok || limit <= 0 {
		return nil
	}
	w := cell.Workload
	fixedPrompt := w.PromptTokens
	if w.Prompt != "" {
		fixedPrompt = 0 // the plan's own text: its length is the server's to count
	}
	in, out := fixedPrompt, w.MaxTokens
	for _, sh := range setup.shapes {
		p := sh.PromptTokens
		if p == 0 && sh.Text == "" {
			p = fixedPrompt
		}
		if o := cmp.Or(sh.MaxTokens, w.MaxTokens); p+o > in+out {
			in, out = p, o
		}
	}
	in = sessionPrompt(w, in, out)
	if in+out > limit {
		return fmt.Errorf("workload %q asks for requests of up to %d tokens (%d prompt + %d output), past the %d-token context the server gives model %q: lower the lengths or raise the server's limit",
			w.Name, in+out, in, out, limit, cell.ModelID)
	}
	return nil
}

// fitShapes fits the server's tokens per filler word when some request's prompt is
// filler of a drawn length, so each is built to the server's own count; the fit and
// its error become a note on the cell's rows.
func fitShapes(ctx context.Context, setup *cellSetup, shapes []executor.Shape) string {
	lo, hi := 0, 0
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
	if hi == 0 {
		return ""
	}
	setup.prompts.Fit = executor.FitTokens(ctx, setup.backend, setup.tmpl, setup.prompts, lo, hi)
	return setup.prompts.Fit.String()
}

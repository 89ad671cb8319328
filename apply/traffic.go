package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/traffic"
	"github.com/planrun/planrun/plan"
)

// readTraffic reads every workload's traffic before anything is sent (traffic.Read): a
// malformed row or an empty file stops the run with file:line. Each dataset's SHA-256
// and row count are returned, for the manifest.
func readTraffic(cells []*plan.Cell, note func(string, ...any)) (map[*plan.Workload]*traffic.Workload, []datasetRead, error) {
	tr := map[*plan.Workload]*traffic.Workload{}
	var read []datasetRead
	for _, c := range cells {
		w := c.Workload
		if _, done := tr[w]; done {
			continue
		}
		t, err := traffic.Read(w)
		if err != nil {
			return nil, nil, err
		}
		tr[w] = t
		if w.Dataset == nil {
			continue
		}
		s := t.Sample
		read = append(read, datasetRead{w.Dataset.Name, ledger.DatasetRun{Path: w.Dataset.Spec.Path, Format: w.Dataset.Spec.Format,
			SHA256: s.Info.SHA256, Rows: s.Info.Rows, Kept: s.Info.Kept}})
		if s.Note != "" {
			note("workload %q: %s", w.Name, s.Note)
		}
	}
	return tr, read, nil
}

// datasetRead is what the manifest records of a dataset a workload read.
type datasetRead struct {
	name string
	run  ledger.DatasetRun
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
		switch {
		case setup.prompts.Text != "" && cal.Actual > 0:
			// A fixed text is not fitted to prompt_tokens: its one request (max_tokens 1)
			// only learns its length.
			a.info("%s: the prompt text is %d tokens by the server's count (1 request of max_tokens 1; a fixed text is not calibrated)",
				cell.ID, cal.Actual)
		case cal.Actual > 0:
			a.info("%s: prompt calibrated to %d tokens by the server's count (requested %d, %d words, %d probes)%s",
				cell.ID, cal.Actual, cal.Requested, cal.Words, cal.Probes, noteSuffix(cal.Note))
		default:
			a.note("%s: prompt not calibrated: %s", cell.ID, cal.Note)
		}
	}
	notes := []string{cal.Note, a.traffic[w].Sample.Note}
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
	in, out := traffic.LongestRequest(w, setup.shapes)
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
	lo, hi := traffic.FillerRange(shapes)
	if hi == 0 {
		return ""
	}
	setup.prompts.Fit = executor.FitTokens(ctx, setup.backend, setup.tmpl, setup.prompts, lo, hi)
	return setup.prompts.Fit.String()
}

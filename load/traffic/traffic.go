// Package traffic compiles a plan's workload into what the executor sends: the request
// template and prompts of a cell, each request's prompt and output length, a level's
// spec, a replayed trace's window, sessions and prefix groups. It reads datasets and
// traces; it sends nothing and knows no server.
package traffic

import (
	"fmt"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// Workload is one workload's traffic, read before anything is sent.
type Workload struct {
	w *plan.Workload
	// Sample is the workload's drawn dataset rows, empty without a dataset. A replay's
	// has no rows (the trace is streamed again while it is sent, never drawn whole):
	// only the trace's Info and, where its window cuts it, a Note.
	Sample dataset.Sample
	window *window // a replay's trace window; nil without a replay block
}

// Read draws the workload's dataset rows, seeded by its seed, or validates a replay's
// trace in one streamed pass: a malformed row or an empty file is an error with
// file:line. A workload without a dataset reads nothing.
func Read(w *plan.Workload) (*Workload, error) {
	t := &Workload{w: w}
	if w.Dataset == nil {
		return t, nil
	}
	var err error
	if w.Replay != nil {
		t.window, t.Sample, err = scanTrace(w)
	} else {
		t.Sample, err = dataset.Draw(w.Dataset.Spec, maxRequests(w), seed(w))
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %q: %w", w.Dataset.Name, err)
	}
	return t, nil
}

// Request is the template of every request a cell of the workload sends to modelID.
func (t *Workload) Request(modelID string) backends.Request {
	w := t.w
	return backends.Request{
		Model:           modelID,
		MaxTokens:       w.MaxTokens,
		ForceMaxTokens:  w.ForceMaxTokens,
		Temperature:     w.Temperature,
		Seed:            w.Seed,
		NoStream:        !w.Stream,
		ReasoningEffort: w.Reasoning.Effort,
		Think:           w.Reasoning.Think,
		Tools:           w.Tools.Tools,
		ToolChoice:      w.Tools.Choice,
	}
}

// Prompts is where a cell's prompts come from: the plan's text, its shared prefix, a
// text dataset's corpus, salted with salt (the cell's id) so cells share no prompt.
func (t *Workload) Prompts(salt string) *executor.Prompts {
	w := t.w
	return &executor.Prompts{Text: w.Prompt, Shared: w.SharedPrefix, Salt: salt, Corpus: corpus(w, t.Sample),
		BlockSize: blockSize(w)}
}

// Shapes are the requests' own lengths: drawn when the workload draws them (DrawShapes),
// a replay's bounding rows, or nil when every request is the template.
func (t *Workload) Shapes() []executor.Shape {
	switch {
	case t.window != nil:
		return t.window.bounds
	case hasShapes(t.w):
		return DrawShapes(t.w, t.Sample)
	}
	return nil
}

// Level is the workload's part of a level's spec: its runs, requests, pacing, sessions
// and trace window. The cell's part (Request, Prompts, Shapes) is the caller's.
func (t *Workload) Level(level plan.LoadLevel) executor.LevelSpec {
	w := t.w
	lv := executor.LevelSpec{
		Concurrency: level.Concurrency,
		Requests:    w.RequestsPerRun(level.Concurrency),
		WarmupRuns:  w.WarmupRuns,
		RepeatRuns:  w.RepeatRuns,
		RequestRate: level.RequestRate,
		Models:      modelMix(w),
		Inputs:      level.Inputs,
		InputTokens: level.InputTokens,
		Arrival:     w.Arrival,
		Session:     sessionSpec(w, level),
		Seed:        uint64(seed(w)),
	}
	if level.RequestRate == 0 {
		lv.Ramp = w.Ramp // the plan allows it on closed loops alone
	}
	if t.window != nil {
		t.window.level(&lv)
	}
	warmOpenLoop(&lv)
	return lv
}

// LevelPrompts gives each level of a cell, in each run of planrun, request markers of
// its own. Salted with the cell's id alone, a cell's second level (and a rerun against a
// server kept up) sent the first one's prompts again, and vLLM's prefix cache served 87%
// of their tokens: TTFT flattered where no prefix was meant to be shared. Prefix-group
// and trace-block texts keep the cell's salt: drawn anew each run, their token counts
// moved with the words drawn (a 160-token trace row counted 175 on Ollama).
func LevelPrompts(p *executor.Prompts, runID string, level plan.LoadLevel) *executor.Prompts {
	lp := *p
	lp.Marker = fmt.Sprintf("%s|c%d|r%g", runID, level.Concurrency, level.RequestRate)
	if level.Inputs > 0 {
		lp.Marker += fmt.Sprintf("|i%d|t%d", level.Inputs, level.InputTokens)
	}
	return &lp
}

// modelMix is the workload's model mix as the executor takes it; nil without one.
func modelMix(w *plan.Workload) []executor.WeightedModel {
	var out []executor.WeightedModel
	for _, m := range w.Models {
		out = append(out, executor.WeightedModel{Name: m.Name, Weight: m.Weight})
	}
	return out
}

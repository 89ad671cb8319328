// Package qualityphase is a run's quality phase: before a cell's timed levels, a
// reference cell gathers its continuations and compares a rerun of itself with them
// (the floor), and any other cell is measured along its reference's (load/quality),
// into the figures its rows carry; the references are kept in the run directory for a
// resumed run.
package qualityphase

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/planrun/planrun/apply/rundir"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/quality"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// Phase is the quality phase's state across a run: each reference's continuations,
// gathered in the reference cell's own phase, and each cell's figures, which its rows
// carry.
type Phase struct {
	runDir     string // where references are kept; "" keeps none
	note, info func(format string, args ...any)

	// blocks maps a reference cell's id to the quality block of the cells compared
	// with it (the first such cell's, in plan order): a reference in a matrix without
	// a quality block of its own still gathers.
	blocks  map[string]*plan.Quality
	refs    map[string]*quality.Reference
	figures map[string]*ledger.Quality
	items   map[string][]quality.Item // accuracy files, read once
}

// New is the phase of a run of cells whose run directory is runDir; note says what
// went wrong, info what went as planned.
func New(cells []*plan.Cell, runDir string, note, info func(format string, args ...any)) *Phase {
	q := &Phase{runDir: runDir, note: note, info: info, blocks: map[string]*plan.Quality{}, refs: map[string]*quality.Reference{},
		figures: map[string]*ledger.Quality{}, items: map[string][]quality.Item{}}
	for _, c := range cells {
		if c.Quality != nil && q.blocks[c.QualityReference] == nil {
			q.blocks[c.QualityReference] = c.Quality
		}
	}
	return q
}

// Of is the cell's quality figures; nil without a quality phase (or a run without
// quality state: an applier built by a test).
func (p *Phase) Of(cellID string) *ledger.Quality {
	if p == nil {
		return nil
	}
	return p.figures[cellID]
}

// qualityConfig is what a block sends: its prompts (built in, or drawn from its dataset), greedy.
func qualityConfig(q *plan.Quality) (quality.Config, error) {
	cfg := quality.Config{MaxTokens: q.MaxTokens, TopK: q.TopLogProbs, Seed: q.Seed, Method: q.Method}
	if q.Dataset == nil {
		cfg.Prompts = quality.Prompts(q.Prompts, q.PromptWords, q.Seed)
		return cfg, nil
	}
	s, err := dataset.Draw(q.Dataset.Spec, q.Prompts, q.Seed)
	if err != nil {
		return cfg, fmt.Errorf("dataset %s: %w", q.Dataset.Name, err)
	}
	for _, r := range s.Rows {
		cfg.Prompts = append(cfg.Prompts, r.Prompt)
	}
	return cfg, nil
}

// Run is a cell's quality phase, before its timed levels: a reference gathers
// its continuations and compares a rerun of itself with them (the floor); any other
// cell is measured along its reference's. Failures are the figures' notes: the timed
// levels run either way.
func (p *Phase) Run(ctx context.Context, cell *plan.Cell, b backends.Backend) {
	if p == nil {
		return
	}
	isRef := p.blocks[cell.ID] != nil
	q := cell.Quality
	if isRef {
		q = p.blocks[cell.ID]
	}
	if q == nil {
		return
	}
	lq := ledger.NewQuality()
	lq.Reference, lq.TopK, lq.Confidence = q.Reference, q.TopLogProbs, cell.Workload.Confidence
	p.figures[cell.ID] = &lq
	fail := func(err error) {
		lq.Notes = "quality not measured: " + err.Error()
		p.note("%s: %s", cell.ID, lq.Notes)
	}
	cfg, err := qualityConfig(q)
	if err != nil {
		fail(err)
		return
	}
	p.info("%s: quality phase (%d prompts × %d tokens, top %d log-probabilities)", cell.ID, len(cfg.Prompts), cfg.MaxTokens, cfg.TopK)
	var notes []string
	refID := cell.QualityReference
	if isRef {
		refID = cell.ID
		ref, err := quality.Gather(ctx, b, cell.ModelID, cfg)
		if err != nil {
			fail(fmt.Errorf("gathering the reference: %w", err))
			return
		}
		p.refs[cell.ID] = ref
		lq.Requests += ref.Requests
		if ref.Why != "" {
			notes = append(notes, "followed, not teacher-forced: "+ref.Why)
		}
	}
	ref := p.refs[refID]
	if ref == nil {
		ref = p.loadReference(refID)
	}
	if ref == nil {
		fail(fmt.Errorf("the reference %s has no continuations in this run (its cell failed, or was complete when the run resumed)", refID))
		return
	}
	res, err := quality.Measure(ctx, b, cell.ModelID, ref, cfg)
	lq.Requests += res.Requests
	if err != nil {
		fail(err)
		return
	}
	d := stats.SummarizeDrift(res.Prompts, lq.Confidence)
	lq.Method, lq.Prompts = ref.Method, d.Prompts
	lq.SameTop1Pct, lq.SameTop1CI = d.SameTop1Pct, d.SameTop1CI
	lq.FirstDivergence, lq.FirstDivergenceCI = d.FirstDivergence, d.FirstDivergenceCI
	lq.KLMean, lq.KLCI = d.KL, d.KLCI
	lq.LogProbDelta, lq.LogProbDeltaCI = d.LogProbDelta, d.LogProbDeltaCI
	if isRef {
		lq.FloorSameTop1Pct, lq.FloorKLMean = d.SameTop1Pct, d.KL
		if d.SameTop1Pct < 100 || d.KL > 0 {
			notes = append(notes, fmt.Sprintf("the engine is not deterministic: a rerun of the reference by the same method agreed at %.1f%% of positions, KL %s, a floor every row compared with it carries",
				d.SameTop1Pct, ledger.FormatFloat(d.KL)))
		}
		p.saveReference(cell.ID, ref, lq)
	} else if f := p.figures[refID]; f != nil {
		lq.FloorSameTop1Pct, lq.FloorKLMean = f.FloorSameTop1Pct, f.FloorKLMean
	}
	if ref.Cut > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d reference continuations cut where the server returned tokens without their log-probabilities", ref.Cut, len(ref.Paths)))
	}
	if res.Lost > 0 {
		notes = append(notes, fmt.Sprintf("%d positions whose token came back without log-probabilities counted as divergences", res.Lost))
	}
	if res.Restarts > 0 {
		notes = append(notes, fmt.Sprintf("%d restarts after a divergence", res.Restarts))
	}
	if res.Retokenized > 0 {
		notes = append(notes, fmt.Sprintf("%d of them re-tokenized the reference's text into other tokens than it generated", res.Retokenized))
	}
	notes = append(notes, "KL over the top "+fmt.Sprint(cfg.TopK)+" with each side's rest lumped: an estimate, never above the full KL")
	if q.Accuracy != nil {
		if note := p.accuracy(ctx, cell, b, q, &lq); note != "" {
			notes = append(notes, note)
		}
	}
	lq.Notes = strings.Join(notes, "; ")
}

// accuracy scores the cell on the block's accuracy file; a note says what went wrong.
func (p *Phase) accuracy(ctx context.Context, cell *plan.Cell, b backends.Backend, q *plan.Quality, lq *ledger.Quality) string {
	acc := q.Accuracy
	items, ok := p.items[acc.Path]
	if !ok {
		var err error
		if items, err = quality.ReadItems(acc.Path, acc.Scorer); err != nil {
			return "accuracy not measured: " + err.Error()
		}
		p.items[acc.Path] = items
	}
	correct, n, err := quality.Accuracy(ctx, b, cell.ModelID, items, acc.Scorer, acc.MaxTokens, q.Seed)
	lq.Requests += n
	if err != nil {
		return "accuracy not measured: " + err.Error()
	}
	lq.AccuracyPrompts = n
	lq.AccuracyPct = 100 * float64(correct) / float64(n)
	lq.AccuracyCI = stats.ProportionInterval(correct, n, lq.Confidence).Scale(100)
	return ""
}

// savedReference is a reference's continuations and floor in the run directory, so a
// resumed run whose reference cell was already complete can still measure the others.
type savedReference struct {
	CellID    string             `json:"cell_id"`
	Reference *quality.Reference `json:"reference"`
	FloorPct  ledger.JSONFloat   `json:"floor_same_top1_pct"`
	FloorKL   ledger.JSONFloat   `json:"floor_kl_mean_nats"`
}

// referencePath is where a reference cell's continuations are kept: quality/ under the
// run directory, one file per reference cell.
func (p *Phase) referencePath(cellID string) string {
	sum := sha256.Sum256([]byte(cellID))
	return filepath.Join(p.runDir, "quality", "reference-"+hex.EncodeToString(sum[:8])+".json")
}

// saveReference keeps the reference for a resumed run; failing to is a note, not a
// failure (this run has it in memory).
func (p *Phase) saveReference(cellID string, ref *quality.Reference, lq ledger.Quality) {
	if p.runDir == "" {
		return
	}
	path := p.referencePath(cellID)
	data, err := json.Marshal(savedReference{CellID: cellID, Reference: ref,
		FloorPct: ledger.JSONFloat(lq.FloorSameTop1Pct), FloorKL: ledger.JSONFloat(lq.FloorKLMean)})
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = rundir.WriteFile(path, data)
	}
	if err != nil {
		p.note("%s: the quality reference was not kept for a resumed run: %v", cellID, err)
	}
}

// loadReference reads a reference an earlier attempt of this run kept, with its floor;
// nil when there is none.
func (p *Phase) loadReference(cellID string) *quality.Reference {
	if p.runDir == "" {
		return nil
	}
	data, err := os.ReadFile(p.referencePath(cellID))
	if err != nil {
		return nil
	}
	s := savedReference{FloorPct: ledger.JSONFloat(math.NaN()), FloorKL: ledger.JSONFloat(math.NaN())} // null stays unmeasured
	if json.Unmarshal(data, &s) != nil || s.CellID != cellID || s.Reference == nil {
		return nil
	}
	p.refs[cellID] = s.Reference
	if p.figures[cellID] == nil {
		f := ledger.NewQuality()
		f.FloorSameTop1Pct, f.FloorKLMean = float64(s.FloorPct), float64(s.FloorKL)
		p.figures[cellID] = &f
	}
	return s.Reference
}

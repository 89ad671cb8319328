package apply

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

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/quality"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// qualityRun is the quality phase's state across a run: each reference's continuations,
// gathered in the reference cell's own phase, and each cell's figures, which its rows
// carry (buildRow via rowContext).
type qualityRun struct {
	// blocks maps a reference cell's id to the quality block of the cells compared
	// with it (the first such cell's, in plan order): a reference in a matrix without
	// a quality block of its own still gathers.
	blocks  map[string]*plan.Quality
	refs    map[string]*quality.Reference
	figures map[string]*ledger.Quality
	items   map[string][]quality.Item // accuracy files, read once
}

func newQualityRun(cells []*plan.Cell) *qualityRun {
	q := &qualityRun{blocks: map[string]*plan.Quality{}, refs: map[string]*quality.Reference{},
		figures: map[string]*ledger.Quality{}, items: map[string][]quality.Item{}}
	for _, c := range cells {
		if c.Quality != nil && q.blocks[c.QualityReference] == nil {
			q.blocks[c.QualityReference] = c.Quality
		}
	}
	return q
}

// of is the cell's quality figures; nil without a quality phase (or a run without
// quality state: an applier built by a test).
func (q *qualityRun) of(cellID string) *ledger.Quality {
	if q == nil {
		return nil
	}
	return q.figures[cellID]
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

// runQuality is a cell's quality phase, before its timed levels: a reference gathers
// its continuations and compares a rerun of itself with them (the floor); any other
// cell is measured along its reference's. Failures are the figures' notes: the timed
// levels run either way.
func (a *applier) runQuality(ctx context.Context, cell *plan.Cell, setup *cellSetup) {
	if a.quality == nil {
		return
	}
	isRef := a.quality.blocks[cell.ID] != nil
	q := cell.Quality
	if isRef {
		q = a.quality.blocks[cell.ID]
	}
	if q == nil {
		return
	}
	lq := ledger.NewQuality()
	lq.Reference, lq.TopK, lq.Confidence = q.Reference, q.TopLogProbs, cell.Workload.Confidence
	a.quality.figures[cell.ID] = &lq
	fail := func(err error) {
		lq.Notes = "quality not measured: " + err.Error()
		a.note("%s: %s", cell.ID, lq.Notes)
	}
	cfg, err := qualityConfig(q)
	if err != nil {
		fail(err)
		return
	}
	a.info("%s: quality phase (%d prompts × %d tokens, top %d log-probabilities)", cell.ID, len(cfg.Prompts), cfg.MaxTokens, cfg.TopK)
	var notes []string
	refID := cell.QualityReference
	if isRef {
		refID = cell.ID
		ref, err := quality.Gather(ctx, setup.backend, cell.ModelID, cfg)
		if err != nil {
			fail(fmt.Errorf("gathering the reference: %w", err))
			return
		}
		a.quality.refs[cell.ID] = ref
		lq.Requests += ref.Requests
		if ref.Why != "" {
			notes = append(notes, "followed, not teacher-forced: "+ref.Why)
		}
	}
	ref := a.quality.refs[refID]
	if ref == nil {
		ref = a.loadReference(refID)
	}
	if ref == nil {
		fail(fmt.Errorf("the reference %s has no continuations in this run (its cell failed, or was complete when the run resumed)", refID))
		return
	}
	res, err := quality.Measure(ctx, setup.backend, cell.ModelID, ref, cfg)
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
		a.saveReference(cell.ID, ref, lq)
	} else if f := a.quality.figures[refID]; f != nil {
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
		if note := a.accuracy(ctx, cell, setup, q, &lq); note != "" {
			notes = append(notes, note)
		}
	}
	lq.Notes = strings.Join(notes, "; ")
}

// accuracy scores the cell on the block's accuracy file; a note says what went wrong.
func (a *applier) accuracy(ctx context.Context, cell *plan.Cell, setup *cellSetup, q *plan.Quality, lq *ledger.Quality) string {
	acc := q.Accuracy
	items, ok := a.quality.items[acc.Path]
	if !ok {
		var err error
		if items, err = quality.ReadItems(acc.Path, acc.Scorer); err != nil {
			return "accuracy not measured: " + err.Error()
		}
		a.quality.items[acc.Path] = items
	}
	correct, n, err := quality.Accuracy(ctx, setup.backend, cell.ModelID, items, acc.Scorer, acc.MaxTokens, q.Seed)
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
func (a *applier) referencePath(cellID string) string {
	sum := sha256.Sum256([]byte(cellID))
	return filepath.Join(a.rec.res.RunDir, "quality", "reference-"+hex.EncodeToString(sum[:8])+".json")
}

// saveReference keeps the reference for a resumed run; failing to is a note, not a
// failure (this run has it in memory).
func (a *applier) saveReference(cellID string, ref *quality.Reference, lq ledger.Quality) {
	if a.rec == nil || a.rec.res == nil || a.rec.res.RunDir == "" {
		return
	}
	path := a.referencePath(cellID)
	data, err := json.Marshal(savedReference{CellID: cellID, Reference: ref,
		FloorPct: ledger.JSONFloat(lq.FloorSameTop1Pct), FloorKL: ledger.JSONFloat(lq.FloorKLMean)})
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = writeFile(path, data)
	}
	if err != nil {
		a.note("%s: the quality reference was not kept for a resumed run: %v", cellID, err)
	}
}

// loadReference reads a reference an earlier attempt of this run kept, with its floor;
// nil when there is none.
func (a *applier) loadReference(cellID string) *quality.Reference {
	if a.rec == nil || a.rec.res == nil || a.rec.res.RunDir == "" {
		return nil
	}
	data, err := os.ReadFile(a.referencePath(cellID))
	if err != nil {
		return nil
	}
	s := savedReference{FloorPct: ledger.JSONFloat(math.NaN()), FloorKL: ledger.JSONFloat(math.NaN())} // null stays unmeasured
	if json.Unmarshal(data, &s) != nil || s.CellID != cellID || s.Reference == nil {
		return nil
	}
	a.quality.refs[cellID] = s.Reference
	if a.quality.figures[cellID] == nil {
		f := ledger.NewQuality()
		f.FloorSameTop1Pct, f.FloorKLMean = float64(s.FloorPct), float64(s.FloorKL)
		a.quality.figures[cellID] = &f
	}
	return s.Reference
}

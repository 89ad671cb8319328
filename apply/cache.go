package apply

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// cacheOutcome is what was done to the server's prefix cache before a level (the
// workload's prefix_cache), and whether an earlier level of its cell ran before it.
type cacheOutcome struct {
	// Done is ledger's prefix_cache value for what took effect: "reset", "bust", or ""
	// (nothing asked, or the reset failed: Failed says why).
	Done, Failed string
	Earlier      bool
}

// prepareCache does what the workload's prefix_cache asks before a level is sent: a
// reset of the server's cache, or a nonce of the level's own in front of every prompt.
func (a *applier) prepareCache(ctx context.Context, cell *plan.Cell, setup *cellSetup, level plan.LoadLevel, lv *executor.LevelSpec) cacheOutcome {
	out := cacheOutcome{Earlier: setup.levels > 0}
	setup.levels++
	switch cell.Workload.PrefixCache {
	case plan.PrefixCacheBust:
		p := *lv.Prompts
		p.Nonce = levelNonce(a.rec.runID(), cell.ID, level)
		lv.Prompts, out.Done = &p, plan.PrefixCacheBust
	case plan.PrefixCacheReset:
		r, ok := setup.backend.(backends.PrefixCacheResetter)
		switch {
		case !ok:
			out.Failed = "a " + setup.backend.Kind() + " backend has no way to reset its server's prefix cache"
		default:
			if err := r.ResetPrefixCache(ctx, cell.ModelID); err != nil {
				out.Failed = err.Error()
			} else {
				out.Done = plan.PrefixCacheReset
			}
		}
	}
	return out
}

// levelNonce is a level's nonce: its run of planrun, cell and level, hashed.
func levelNonce(runID, cellID string, level plan.LoadLevel) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%s", runID, cellID, level)
	return fmt.Sprintf("%016x", h.Sum64())
}

// cacheNotes puts on the row what was done to the cache, and says so when a level with
// nothing done was measured on a cache warmed before it: the server's usage says its
// cache served more of the prompts than the level's own requests shared with each
// other, or an earlier level of the cell sent the same shared texts.
func cacheNotes(w *plan.Workload, row *ledger.Row, c cacheOutcome) []string {
	row.PrefixCache = c.Done
	var notes []string
	if c.Failed != "" {
		notes = append(notes, "prefix cache not reset: "+c.Failed)
	}
	if c.Done != "" {
		return notes
	}
	shared := row.SharedPrefixPct
	if math.IsNaN(shared) {
		shared = 0
	}
	// The level's own earlier runs (warm-up, repeats) send its shared texts again by
	// design; only where they cannot explain the excess does it say the cache was warm.
	ownRuns := sharesAcrossLevels(w) && (w.WarmupRuns > 0 || w.RepeatRuns > 1)
	var why string
	switch {
	case c.Earlier && sharesAcrossLevels(w):
		why = "an earlier level of this cell sent the same shared texts (prefix groups, a trace's hash blocks or one shared prompt), and nothing emptied the cache since"
	case w.Session == nil && !ownRuns && row.CacheHitPct > shared+1: // NaN (no cached count) is never above
		why = fmt.Sprintf("the server's usage says its cache served %.1f%% of the prompt tokens, more than the %.1f%% this level's requests shared with each other", row.CacheHitPct, shared)
	}
	if why == "" {
		return notes
	}
	row.PrefixCache = ledger.PrefixCacheWarm
	return append(notes, "prefix cache warm: "+why+"; TTFT here is a warm cache's, not a cold prefill's (prefix_cache = \"reset\" or \"bust\" measures it cold)")
}

// sharesAcrossLevels says whether the workload's levels send the same texts: prefix
// groups and a trace's hash blocks are drawn from the cell (so every level sends
// them), one shared prompt is every request's.
func sharesAcrossLevels(w *plan.Workload) bool {
	return w.Prefix != nil || w.SharedPrefix || w.Dataset != nil && w.Dataset.Spec.Format == dataset.FormatMooncake
}

package apply

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/planrun/planrun/backends"
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

// sharesAcrossLevels says whether the workload's levels send the same texts: prefix
// groups and a trace's hash blocks are drawn from the cell (so every level sends
// them), one shared prompt is every request's.
func sharesAcrossLevels(w *plan.Workload) bool {
	return w.Prefix != nil || w.SharedPrefix || w.Dataset != nil && w.Dataset.Spec.Format == dataset.FormatMooncake
}

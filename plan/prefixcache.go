package plan

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// The prefix_cache modes of a workload: what is done to the server's prefix cache
// before each of its levels.
const (
	// PrefixCacheKeep does nothing: a level may be measured on a cache an earlier level
	// (or run) warmed, which its row then says.
	PrefixCacheKeep = "keep"
	// PrefixCacheReset empties the server's cache before each level (vLLM's
	// /reset_prefix_cache in dev mode; Ollama by reloading the model).
	PrefixCacheReset = "reset"
	// PrefixCacheBust leads every prompt of a level with a nonce of its own, so nothing
	// an earlier level or run left in the cache matches.
	PrefixCacheBust = "bust"
)

var prefixCacheModes = []string{PrefixCacheKeep, PrefixCacheReset, PrefixCacheBust}

// decodePrefixCache reads a workload's prefix_cache (default keep).
func decodePrefixCache(l *loader, w *Workload, a hcl.Attributes, ctx *hcl.EvalContext) {
	w.PrefixCache = PrefixCacheKeep
	at := a["prefix_cache"]
	if at == nil || !l.decode(at, ctx, &w.PrefixCache) || slices.Contains(prefixCacheModes, w.PrefixCache) {
		return
	}
	l.errorf(at.Expr.Range().Ptr(), "Invalid prefix_cache", "prefix_cache is %s, not %q: what is done to the server's prefix cache before each level.%s",
		quoteList(prefixCacheModes), w.PrefixCache, suggestion(w.PrefixCache, prefixCacheModes))
	w.PrefixCache = PrefixCacheKeep
}

package anthropic

import "context"

// ResetPrefixCache implements backends.PrefixCacheResetter through the server's own
// root (vLLM's /reset_prefix_cache in dev mode).
func (b *Backend) ResetPrefixCache(ctx context.Context, model string) error {
	return b.side.ResetPrefixCache(ctx, model)
}

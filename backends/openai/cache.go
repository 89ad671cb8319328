package openai

import (
	"context"
	"errors"
	"strings"

	"github.com/planrun/planrun/backends"
)

// ResetPrefixCache implements backends.PrefixCacheResetter: POST /reset_prefix_cache at
// the server's root, which vLLM serves only in its dev mode (VLLM_SERVER_DEV_MODE=1) and
// answers {"success": false} while blocks are still held by running requests.
func (b *Backend) ResetPrefixCache(ctx context.Context, _ string) error {
	if b.strict {
		return errors.New("a gateway exposes no prefix cache reset")
	}
	root := strings.TrimSuffix(strings.TrimSuffix(b.cfg.URL, "/"), "/v1")
	var v struct {
		Success *bool `json:"success"`
	}
	if e := b.Core().PostJSON(ctx, root+"/reset_prefix_cache", struct{}{}, &v); e != nil {
		if e.Class == backends.ErrNotFound {
			return errors.New("the server has no /reset_prefix_cache: vLLM serves it only in dev mode (start it with VLLM_SERVER_DEV_MODE=1)")
		}
		return e
	}
	if v.Success != nil && !*v.Success {
		return errors.New("the server did not reset its prefix cache (vLLM refuses while running requests hold blocks)")
	}
	return nil
}

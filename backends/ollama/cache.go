package ollama

import (
	"context"
	"fmt"
	"strings"
)

// ResetPrefixCache implements backends.PrefixCacheResetter: Ollama keeps a loaded
// model's prompt cache in its runner, so the model is unloaded (a generate request
// without a prompt and keep_alive 0, which Ollama answers with done_reason "unload") and
// loaded again (one without keep_alive: done_reason "load"), which starts a runner with
// an empty cache.
func (b *Backend) ResetPrefixCache(ctx context.Context, model string) error {
	url := strings.TrimSuffix(b.cfg.URL, "/") + "/api/generate"
	step := func(body map[string]any, want string) error {
		body["model"], body["stream"] = model, false
		var v struct {
			DoneReason string `json:"done_reason"`
		}
		if e := b.Core().PostJSON(ctx, url, body, &v); e != nil {
			return e
		}
		if v.DoneReason != want {
			return fmt.Errorf("ollama answered the %s of %s with done_reason %q, not %q", want, model, v.DoneReason, want)
		}
		return nil
	}
	if err := step(map[string]any{"keep_alive": 0}, "unload"); err != nil {
		return err
	}
	load := map[string]any{}
	if b.cfg.KeepAlive != "" {
		load["keep_alive"] = b.cfg.KeepAlive
	}
	return step(load, "load")
}

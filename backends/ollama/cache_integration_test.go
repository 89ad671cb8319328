package ollama

import (
	"context"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// TestRealOllamaResetPrefixCache: the reset unloads the model (Ollama says "unload")
// and loads it again ("load"), so the model is loaded afterwards, in a new runner. (Its
// prompt_eval_count counts every prompt token whether or not the runner's cache held
// them, so the cache's work cannot be read from Ollama's counts.)
func TestRealOllamaResetPrefixCache(t *testing.T) {
	s := realOllama(t)
	b, err := New(backends.Config{Name: "ollama.real", URL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	temp := 0.0
	req := backends.Request{Model: s.Model, Prompt: strings.Repeat("the cache holds this prompt ", 12), MaxTokens: 2, Temperature: &temp}
	if got := b.Do(ctx, req); !got.OK() {
		t.Fatalf("request: %v", got.Err)
	}
	if err := b.ResetPrefixCache(ctx, s.Model); err != nil {
		t.Fatal(err)
	}
	loaded, err := b.LoadedModels(ctx)
	if err != nil || len(loaded) != 1 {
		t.Fatalf("after the reset: loaded %v, %v; want the model loaded again", loaded, err)
	}
	if got := b.Do(ctx, req); !got.OK() || got.Server == nil || got.Server.PromptEvalCount <= 0 {
		t.Fatalf("request after the reset: %v", got.Err)
	}
	if err := b.ResetPrefixCache(ctx, "no-such-model"); err == nil {
		t.Errorf("a reset of a model the server lacks succeeded")
	}
}

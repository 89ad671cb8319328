package backends

import "context"

// The optional capabilities below are found on a Backend by interface assertion:
// apply uses what the server offers instead of asking which kind it is.

// ModelDetails is what a server says about one model it has.
type ModelDetails struct {
	ParameterSize     string // "7.6B"
	QuantizationLevel string // "Q4_K_M"
	Family            string // "llama"
	Format            string // "gguf"
	// Info is the model's own metadata (GGUF keys such as "llama.block_count"), from
	// which gpu.ShapeFromModelInfo reads its shape for the VRAM estimate.
	Info map[string]any
}

// ContextLimiter is a server that says how many tokens (prompt and output together) a
// model's requests may hold, so requests past it are refused before any is sent.
type ContextLimiter interface {
	ContextLength(ctx context.Context, model string) (tokens int, ok bool)
}

// ModelShower describes a model the server has. A model it lacks is an *Error of class
// ErrNotFound.
type ModelShower interface {
	ShowModel(ctx context.Context, model string) (ModelDetails, error)
}

// ModelManager is a server that keeps models by name and can fetch them (Ollama):
// apply checks a cell's model, pulls it if the plan says so, and records its digest.
type ModelManager interface {
	ModelShower
	// PullModel fetches the model into the server, telling progress as it goes, and
	// succeeds only once the server says the model is complete.
	PullModel(ctx context.Context, model string, progress func(string)) error
	// ModelDigest is the digest of the model's weights and the name the server lists it
	// under (by SameModel).
	ModelDigest(ctx context.Context, model string) (digest, name string, err error)
}

// LoadedModel is one model a server holds in memory, as the server reports it.
type LoadedModel struct {
	Name          string `json:"name"`
	SizeBytes     int64  `json:"size_bytes"`      // the whole model with its KV cache
	SizeVRAMBytes int64  `json:"size_vram_bytes"` // the part on the GPU
	ContextLength int    `json:"context_length,omitempty"`
}

// Offloaded reports whether part of the model sits in CPU memory.
func (m LoadedModel) Offloaded() bool { return m.SizeVRAMBytes < m.SizeBytes }

// ServerMemory is a server that lists its loaded models with their memory (Ollama's
// /api/ps): apply polls it during a measured window.
type ServerMemory interface {
	LoadedModels(ctx context.Context) ([]LoadedModel, error)
}

// MetricsSource is a server that may expose Prometheus metrics (vLLM's /metrics, with
// KV-cache usage): apply polls the URL during a measured window. Empty means none.
type MetricsSource interface {
	MetricsURL() string
}

// ConnectionWarmer is a server planrun can open connections to ahead of a schedule, so
// requests sent at set times (a trace replay) do not pay a connection set-up then. It
// returns how many connections it left open in the pool.
type ConnectionWarmer interface {
	WarmConnections(ctx context.Context, n int) int
}

// DueCaller is a backend whose Do calls Request.Due just before the request's start
// stamp (every backend on the timing core).
type DueCaller interface {
	CallsDue()
}

// Tokenizer is a server that turns a text into a model's token ids (vLLM's /tokenize):
// a quality phase sends a prompt and a reference's continuation as ids, so the tokens a
// cell is scored on are the reference's own, not a re-tokenization of their text.
type Tokenizer interface {
	Tokenize(ctx context.Context, model, text string) ([]int, error)
}

// PrefixCacheResetter is a server whose prefix cache planrun can empty before a level
// (a workload's prefix_cache = "reset"): vLLM's /reset_prefix_cache (served in its dev
// mode), Ollama by unloading and reloading the model. An error says why it could not.
type PrefixCacheResetter interface {
	ResetPrefixCache(ctx context.Context, model string) error
}

package backends

import (
	"context"
	"time"
)

// Backend is a server planrun measures. Implementations are adapters over the one timing
// core: they build requests and decode streams; the core reads the clock.
type Backend interface {
	// Kind is "ollama", "openai" or "taotoken".
	Kind() string
	// Name is the plan's name for the backend ("ollama.local").
	Name() string
	// Do sends one request and measures it. It never returns an error: failures are
	// recorded on the Sample with their class, and the run goes on.
	Do(ctx context.Context, req Request) Sample
	// Probe checks the server: reachable, version, models, whether usage is reported.
	Probe(ctx context.Context, modelIDs []string) ProbeResult
}

// Config is what a backend needs from the plan; the plan package fills it, so backends
// never depend on HCL.
type Config struct {
	Kind string // "ollama", "openai", "taotoken"
	Name string // "<kind>.<name>" as in the plan
	URL  string // base URL; for openai/taotoken it includes /v1
	// API selects the endpoint: ollama "chat" (default) | "generate";
	// openai/taotoken "chat" (default) | "completions".
	API string
	// APIKeyEnv names the environment variable holding the key; the key itself never
	// appears in a plan, an output file or a log.
	APIKeyEnv string
	// KeyHeader is how the key is sent: KeyBearer (Authorization: Bearer, the default)
	// or KeyXAPIKey (x-api-key, Anthropic's Messages API).
	KeyHeader string
	Headers   map[string]string // extra request headers (no secrets)
	// ExtraFields are merged into the JSON request body (openai/ollama only; a strict
	// gateway rejects unknown fields).
	ExtraFields map[string]any
	// EngineExtensions allows vLLM/SGLang fields (ignore_eos, min_tokens) to force the
	// output length. Off for strict servers.
	EngineExtensions bool
	// KeepAlive is Ollama's keep_alive (e.g. "5m"); empty leaves the server default.
	KeepAlive string
	Timeouts  Timeouts
	// Getenv reads environment variables (injected so tests need not touch the process
	// environment); nil means os.Getenv.
	Getenv func(string) string `json:"-"`
	// SourceAddr, when set, is the local address the backend's connections bind
	// (a load agent's own 127.0.0.x, so that agents on one machine do not share one
	// address's ephemeral ports to the server).
	SourceAddr string
}

// The ways a key is sent (Config.KeyHeader).
const (
	KeyBearer  = "bearer"
	KeyXAPIKey = "x-api-key"
)

// Timeouts bound each phase of a request; zero means no limit for that phase.
type Timeouts struct {
	Connect    time.Duration // TCP connect (and TLS)
	FirstToken time.Duration // request start to first content chunk
	Idle       time.Duration // longest gap between chunks
	Total      time.Duration // request start to end of stream
}

// ProbeResult is what `planrun probe` shows for one backend.
type ProbeResult struct {
	Backend       string          `json:"backend"`
	URL           string          `json:"url"`
	Reachable     bool            `json:"reachable"`
	Version       string          `json:"version,omitempty"`
	Models        []string        `json:"models,omitempty"`
	ModelsPresent map[string]bool `json:"models_present,omitempty"`
	UsageReported *bool           `json:"usage_reported,omitempty"`
	Problems      []string        `json:"problems,omitempty"` // what a person can act on
	// ModelDigests maps a model id to the server's digest of it (Ollama /api/show).
	ModelDigests map[string]string `json:"model_digests,omitempty"`
	// ModelRoots maps a model id to the weights the server loaded for it, as it names
	// them (vLLM's /v1/models root: a checkpoint path or a Hugging Face repository id).
	ModelRoots map[string]string `json:"model_roots,omitempty"`
	// ErrorClass is the class of the failure that ended the probe early (server
	// unreachable, key missing or refused, ...); empty when the probe ran through.
	ErrorClass ErrorClass `json:"error_class,omitempty"`
}

// OK reports whether every check passed.
func (p ProbeResult) OK() bool { return p.Reachable && len(p.Problems) == 0 }

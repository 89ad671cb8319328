package backends

import "github.com/planrun/planrun/internal/registry"

// Kind is what planrun knows about one backend kind, declared once by its adapter
// package and registered by backends/connect (RegisterKind): plan checks backend blocks against these facts
// and connect builds the adapter with New. What a kind can do beyond measuring (manage
// models, report server memory) is found on the built Backend by interface assertion
// (ModelManager, ModelShower, ServerMemory, MetricsSource), not declared here.
type Kind struct {
	Name string // the label in backend "<name>" "<x>" blocks
	// DefaultURL is the base URL when the plan gives none; URLRequired makes a plan
	// without url an error instead.
	DefaultURL  string
	URLRequired bool
	// DefaultKeyEnv is the variable the key is read from when the plan names none.
	DefaultKeyEnv string
	// KeyHeaders are the ways the kind can send its key (Config.KeyHeader), the default
	// first; a plan chooses with api_key_header. Empty: KeyBearer only.
	KeyHeaders []string
	// APIs are the accepted api values; the first is the default.
	APIs             []string
	KeepAlive        bool // accepts keep_alive (Ollama's)
	EnsureModel      bool // accepts ensure_model (its adapter is a ModelManager)
	ExtraFields      bool // accepts extra_fields (a strict gateway rejects unknown fields)
	EngineExtensions bool // accepts engine_extensions (vLLM/SGLang's ignore_eos, min_tokens)
	// Reasoning are the workload reasoning controls this kind sends ("reasoning_effort",
	// "think"); a workload setting another gets a warning and a row note.
	Reasoning []string
	// Endpoints are the paths the adapter appends to the base URL: a plan's url that
	// already ends in one (or in its first part, Ollama's "/api") names an endpoint, not
	// the base, and the plan says so. BasePath is the path the kind's servers serve under
	// ("/v1"); a url without it gets a warning.
	Endpoints []string
	BasePath  string
	// ReservedFields are the request body fields the adapter sets itself, which
	// extra_fields may not set (the plan refuses them before any request).
	ReservedFields []string
	// ServerLabel names the server software for the VRAM-gap explanation
	// (gpu.GapContext.Server): "ollama" or "vllm".
	ServerLabel string
	// New builds the adapter for a config of this kind.
	New func(Config, ...Option) (Backend, error)
}

// Constructor adapts an adapter's typed New to Kind.New, keeping a failed construction
// a nil Backend (a nil *T in an interface would not be).
func Constructor[B Backend](newB func(Config, ...Option) (B, error)) func(Config, ...Option) (Backend, error) {
	return func(cfg Config, opts ...Option) (Backend, error) {
		b, err := newB(cfg, opts...)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

// kinds are the registered kinds.
var kinds = registry.New("backend kind", func(k Kind) string { return k.Name })

// RegisterKind makes k known by its name to LookupKind and KindNames, where the plan
// decoder finds the kinds without compiling their adapters. backends/connect registers
// every adapter's kind from its init function; a second kind of one name panics.
func RegisterKind(k Kind) { kinds.Register(k) }

// LookupKind returns the registered kind named name.
func LookupKind(name string) (Kind, bool) { return kinds.Lookup(name) }

// KindNames are the registered kinds' names, sorted.
func KindNames() []string { return kinds.Names(nil) }

package backends

import "slices"

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
	// APIs are the accepted api values; the first is the default.
	APIs             []string
	KeepAlive        bool // accepts keep_alive (Ollama's)
	EnsureModel      bool // accepts ensure_model (its adapter is a ModelManager)
	ExtraFields      bool // accepts extra_fields (a strict gateway rejects unknown fields)
	EngineExtensions bool // accepts engine_extensions (vLLM/SGLang's ignore_eos, min_tokens)
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

// kinds are the registered kinds, in registration order.
var kinds []Kind

// RegisterKind makes k known by its name to LookupKind and KindNames, where the plan
// decoder finds the kinds without compiling their adapters. backends/connect registers
// every adapter's kind from its init function. A second kind of one name panics: two
// adapters claiming one label is a programming error.
func RegisterKind(k Kind) {
	if _, dup := LookupKind(k.Name); dup {
		panic("backends: kind " + k.Name + " registered twice")
	}
	kinds = append(kinds, k)
}

// LookupKind returns the registered kind named name.
func LookupKind(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// KindNames are the registered kinds' names, sorted.
func KindNames() []string {
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, k.Name)
	}
	slices.Sort(names)
	return names
}

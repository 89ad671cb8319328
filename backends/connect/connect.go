// Package connect builds the backend a plan's backend block asks for. It is the one
// place that knows all adapters; it cannot live in package backends, which the adapters
// import.
package connect

import (
	"fmt"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/ollama"
	"github.com/planrun/planrun/backends/openai"
	"github.com/planrun/planrun/backends/taotoken"
)

// Kinds are the backend kinds New accepts.
var Kinds = []string{"ollama", "openai", "taotoken"}

// New returns the backend for cfg.Kind. Options (a clock, an HTTP client) are for tests
// and the load tools; cfg.Getenv nil means os.Getenv.
func New(cfg backends.Config, opts ...backends.Option) (backends.Backend, error) {
	switch cfg.Kind {
	case "ollama":
		return ollama.New(cfg, opts...)
	case "openai":
		return openai.New(cfg, opts...)
	case "taotoken":
		return taotoken.New(cfg, opts...)
	}
	return nil, fmt.Errorf("backend %s: unknown kind %q (want one of %v)", cfg.Name, cfg.Kind, Kinds)
}

// Package connect lists the backend kinds planrun knows, registers them with package
// backends, and builds the backend a plan's backend block asks for. It is the one place
// that knows all adapters; it cannot live in package backends, which the adapters
// import. A program that loads plans imports it, so that plan, which compiles no
// adapter, finds the kinds registered.
package connect

import (
	"fmt"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/anthropic"
	"github.com/planrun/planrun/backends/ollama"
	"github.com/planrun/planrun/backends/openai"
	"github.com/planrun/planrun/backends/taotoken"
)

// Kinds are the backend kinds, one line per adapter package: adding a kind is its
// package and a line here.
var Kinds = []backends.Kind{
	anthropic.Kind,
	ollama.Kind,
	openai.Kind,
	taotoken.Kind,
}

func init() {
	for _, k := range Kinds {
		backends.RegisterKind(k)
	}
}

// New returns the backend for cfg.Kind. Options (a clock, an HTTP client) are for tests
// and the load tools; cfg.Getenv nil means os.Getenv.
func New(cfg backends.Config, opts ...backends.Option) (backends.Backend, error) {
	k, ok := backends.LookupKind(cfg.Kind)
	if !ok {
		return nil, fmt.Errorf("backend %s: unknown kind %q (want one of %v)", cfg.Name, cfg.Kind, backends.KindNames())
	}
	return k.New(cfg, opts...)
}

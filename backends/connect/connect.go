// Package connect lists the backend kinds planrun knows and builds the backend a plan's
// backend block asks for. It is the one place that knows all adapters; it cannot live in
// package backends, which the adapters import.
package connect

import (
	"fmt"
	"sort"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/ollama"
	"github.com/planrun/planrun/backends/openai"
	"github.com/planrun/planrun/backends/taotoken"
)

// Kinds are the backend kinds, one line per adapter package: adding a kind is its
// package and a line here.
var Kinds = []backends.Kind{
	ollama.Kind,
	openai.Kind,
	taotoken.Kind,
}

// Lookup returns the declaration of the kind named name.
func Lookup(name string) (backends.Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return backends.Kind{}, false
}

// Names are the kinds' names, sorted.
func Names() []string {
	names := make([]string, 0, len(Kinds))
	for _, k := range Kinds {
		names = append(names, k.Name)
	}
	sort.Strings(names)
	return names
}

// New returns the backend for cfg.Kind. Options (a clock, an HTTP client) are for tests
// and the load tools; cfg.Getenv nil means os.Getenv.
func New(cfg backends.Config, opts ...backends.Option) (backends.Backend, error) {
	k, ok := Lookup(cfg.Kind)
	if !ok {
		return nil, fmt.Errorf("backend %s: unknown kind %q (want one of %v)", cfg.Name, cfg.Kind, Names())
	}
	return k.New(cfg, opts...)
}

// Package registry holds what a program links in, by name: backends' kinds and ledger's
// output kinds are registered from init functions (by backends/connect and report) and
// looked up by the plan decoder, which so compiles none of their implementations.
package registry

import (
	"fmt"
	"slices"
)

// Registry holds entries of type T, each known by the name its name function gives.
type Registry[T any] struct {
	what    string // what the entries are, for the panic
	name    func(T) string
	entries []T
}

// New returns an empty registry of what (e.g. "backend kind"), naming entries by name.
func New[T any](what string, name func(T) string) *Registry[T] {
	return &Registry[T]{what: what, name: name}
}

// Register adds v. A second entry of one name panics: two packages claiming one label
// is a programming error.
func (r *Registry[T]) Register(v T) {
	if _, dup := r.Lookup(r.name(v)); dup {
		panic(fmt.Sprintf("registry: %s %q registered twice", r.what, r.name(v)))
	}
	r.entries = append(r.entries, v)
}

// Lookup returns the entry named name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	for _, v := range r.entries {
		if r.name(v) == name {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// Names are the names of the entries keep accepts (nil: every entry), sorted.
func (r *Registry[T]) Names(keep func(T) bool) []string {
	var names []string
	for _, v := range r.entries {
		if keep == nil || keep(v) {
			names = append(names, r.name(v))
		}
	}
	slices.Sort(names)
	return names
}

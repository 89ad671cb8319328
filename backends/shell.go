package backends

import (
	"context"
	"fmt"
	"net/url"
)

// Shell is the part of a Backend that every adapter writes alike: its name and kind, its
// timing core, and Do, which hands the adapter to the core. An adapter embeds it, made by
// NewShell once the config has passed the adapter's own checks.
type Shell struct {
	kind, name string
	core       *Core
	adapter    Adapter
}

// NewShell makes the shell of adapter a, measured by a new Core for cfg.
func NewShell(cfg Config, a Adapter, opts ...Option) Shell {
	return Shell{kind: cfg.Kind, name: cfg.Name, core: NewCore(cfg, opts...), adapter: a}
}

// Kind implements Backend.
func (s Shell) Kind() string { return s.kind }

// Name implements Backend.
func (s Shell) Name() string { return s.name }

// Core is the timing core the backend measures with.
func (s Shell) Core() *Core { return s.core }

// Do implements Backend: the core sends and times req through the adapter.
func (s Shell) Do(ctx context.Context, req Request) Sample { return s.core.Do(ctx, s.adapter, req) }

// CheckURL fails, naming the backend and giving example, when cfg.URL is not an
// http(s) URL with a host.
func CheckURL(cfg Config, example string) error {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("backend %s: url %q is not an http(s) URL (e.g. %s)", cfg.Name, cfg.URL, example)
	}
	return nil
}

// Package realserver holds what the integration test helpers (ollamatest, vllmtest,
// gatewaytest, slurmtest, browsertest) share: the one policy for a tool that is not
// installed, finding a pinned install under <repo>/.tools, or where an environment
// variable names it, and keeping one real server per test binary.
//
// The policy: a test whose tool is missing skips, naming the install command, so
// `go test ./...` passes on a fresh clone; with PLANRUN_INTEGRATION set (as
// scripts/test.sh and .ci/run set it) it fails instead, so integration coverage cannot
// silently vanish where it is meant to run.
package realserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// IntegrationEnv is the variable that turns a missing tool from a skip into a failure.
const IntegrationEnv = "PLANRUN_INTEGRATION"

// Missing ends t because a tool it needs is not on this machine; why says how to
// install it. With IntegrationEnv unset t is skipped, else it fails.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(IntegrationEnv) == "" {
		t.Skip(why + " (" + IntegrationEnv + " is unset, so this integration test is skipped)")
	}
	t.Fatal(why + " (" + IntegrationEnv + " is set, so a missing tool fails)")
}

// Require returns the install's path for t. A missing install ends t through Missing
// with how to install it; a path that the install's variable names but that does not
// exist fails t whatever the policy, since someone asked for it.
func Require(t testing.TB, in Install) string {
	t.Helper()
	p, err := in.Find()
	switch {
	case err != nil && os.Getenv(in.Env) != "":
		t.Fatal(err)
	case err != nil:
		Missing(t, err.Error())
	}
	return p
}

// Install is a pinned install the tests run.
type Install struct {
	Env   string // the environment variable that overrides its path
	Path  string // its path under the repository root, e.g. .tools/bin/ollama
	Name  string // what a lookup that cannot start names: "the ollama binary"
	Label string // what a missing install is: "ollama binary" ("no ollama binary at ...")
	Hint  string // how to install it: "run scripts/install-ollama.sh to build the pinned version"
}

// Find returns the install's path: $Env, else Path under the repository root.
func (i Install) Find() (string, error) {
	if p := os.Getenv(i.Env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", i.Env, p, err)
		}
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("cannot find %s: %w (set %s)", i.Name, err, i.Env)
	}
	return i.In(root)
}

// In returns the install's path under repository root, or an error saying how to
// install it.
func (i Install) In(root string) (string, error) {
	p := filepath.Join(root, i.Path)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no %s at %s: %s (or set %s)", i.Label, p, i.Hint, i.Env)
	}
	return p, nil
}

// RepoRoot walks up from the working directory (a package directory under go
// test) to the directory holding go.mod, where .tools/ lives.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Shared is one real server per test binary, started by the first test that needs it
// (so unit tests and fuzz runs of a package do not pay for it) and stopped from
// TestMain (Main, or Stop where one TestMain stops several).
type Shared[S interface{ Stop() error }] struct {
	Name    string  // the helper package, which prefixes the errors: "vllmtest"
	Pattern string  // the server directory's os.MkdirTemp pattern
	Install Install // what Start runs: Get ends a test through Require when it is missing
	// Start starts the server with its files under dir; on error nothing is left running.
	Start func(dir string) (S, error)

	once    sync.Once
	srv     S
	started bool
	dir     string
	err     error
}

// Get returns the server, starting it on first use. A missing install ends the test
// through Require; a test fails if the server cannot start.
func (s *Shared[S]) Get(t testing.TB) S {
	t.Helper()
	Require(t, s.Install)
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", s.Pattern); s.err == nil {
			s.srv, s.err = s.Start(s.dir)
			s.started = s.err == nil
		}
	})
	if s.err != nil {
		t.Fatalf("%s: %v", s.Name, s.err)
	}
	return s.srv
}

// Main runs the package's tests and then stops the server: TestMain's body,
// os.Exit(s.Main(m)).
func (s *Shared[S]) Main(m *testing.M) int {
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, s.Name+":", err)
		code = 1
	}
	return code
}

// Stop stops the server if a test started it, and removes its directory.
func (s *Shared[S]) Stop() error {
	var err error
	if s.started {
		err = s.srv.Stop()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
	return err
}

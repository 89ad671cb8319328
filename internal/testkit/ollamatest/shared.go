package ollamatest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/planrun/planrun/internal/testkit/realserver"
)

// shared is the test binary's one real Ollama.
var shared = &realserver.Shared[*Server]{Name: "ollamatest", Pattern: "planrun-ollama-", Install: install, Start: StartServer}

// Shared returns the test binary's real Ollama, starting it on first use (so unit tests
// and fuzz runs of a package do not pay for it). A package that calls it must run its
// tests through Main.
func Shared(t testing.TB) *Server {
	t.Helper()
	return shared.Get(t)
}

// Main runs the package's tests and then stops the shared server, checking that none
// of its processes is left: use it as TestMain's body, os.Exit(ollamatest.Main(m)).
func Main(m *testing.M) int { return shared.Main(m) }

// Digest reads a model's digest from the server's /api/tags with plain net/http, apart
// from the code under test.
func (s *Server) Digest(t testing.TB, name string) string {
	t.Helper()
	resp, err := http.Get(s.URL + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tags struct {
		Models []struct{ Name, Digest string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&tags); err != nil {
		t.Fatal(err)
	}
	for _, m := range tags.Models {
		if m.Name == name && m.Digest != "" {
			return m.Digest
		}
	}
	t.Fatalf("/api/tags lists no digest for %s: %+v", name, tags)
	return ""
}

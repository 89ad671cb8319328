package ollamatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
)

// One real server per test binary, started by the first test that needs it (so unit
// tests and fuzz runs of a package do not pay for it) and stopped by Main.
var (
	sharedOnce sync.Once
	sharedSrv  *Server
	sharedDir  string
	sharedErr  error
)

// Shared returns the test binary's real Ollama, starting it on first use. A package that
// calls it must run its tests through Main.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() {
		if sharedDir, sharedErr = os.MkdirTemp("", "planrun-ollama-"); sharedErr == nil {
			sharedSrv, sharedErr = StartServer(sharedDir)
		}
	})
	if sharedErr != nil {
		t.Fatalf("ollamatest: %v", sharedErr)
	}
	return sharedSrv
}

// Main runs the package's tests and then stops the shared server, checking that none
// of its processes is left: use it as TestMain's body, os.Exit(ollamatest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if sharedSrv != nil {
		if err := sharedSrv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "ollamatest:", err)
			code = 1
		}
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	return code
}

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

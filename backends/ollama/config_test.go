package ollama

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/planrun/planrun/backends"
)

// A backend block the adapter cannot serve is refused when it is built, naming the
// backend and what is wrong.
func TestNewRefusesItsConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  backends.Config
		want string
	}{
		{"not a url", backends.Config{URL: "127.0.0.1:11434"}, `url "127.0.0.1:11434" is not an http(s) URL`},
		{"unknown api", backends.Config{URL: "http://x.test", API: "completions"}, `api "completions" is not one of`},
		{"a field planrun sets", backends.Config{URL: "http://x.test", ExtraFields: map[string]any{"stream": false, "model": "x"}},
			"extra fields model, stream not allowed"},
		{"options not an object", backends.Config{URL: "http://x.test", ExtraFields: map[string]any{"options": 3}},
			"extra fields options not allowed"},
	} {
		c.cfg.Name = "local"
		b, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "backend local: ") || b != nil {
			t.Errorf("%s: New gave %v, %v; want an error naming the backend and %q", c.name, b, err, c.want)
		}
	}
	b, err := New(backends.Config{Name: "local", URL: "http://x.test", ExtraFields: map[string]any{"options": map[string]any{}, "format": "json"}})
	if err != nil || b.Kind() != "ollama" {
		t.Fatalf("options as an object and a field of its own: %v, %v", b, err)
	}
}

// Models asks /api/tags once and keeps the answer, but not a failure: the next call
// asks again. A model named without its tag has the digest of the tagged name.
func TestModelsCachedAndDigestByName(t *testing.T) {
	var asked atomic.Int32
	fail := atomic.Bool{}
	fail.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		if fail.Load() {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"models":[{"name":"tiny:latest","model":"tiny:latest","digest":"0123456789abcdef0123"}]}`)
	}))
	defer srv.Close()
	b := mustNew(t, backends.Config{URL: srv.URL})
	if m, e := b.Models(context.Background()); e == nil || m != nil || e.Class != backends.ErrServer {
		t.Fatalf("a failing /api/tags: %v, %v; want its 5xx error", m, e)
	}
	fail.Store(false)
	for range 2 {
		if m, e := b.Models(context.Background()); e != nil || len(m) != 1 || m[0] != "tiny:latest" {
			t.Fatalf("Models = %v, %v", m, e)
		}
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("/api/tags asked %d times, want 2 (the failure, then once for both calls)", n)
	}
	if d, full := b.digest("tiny"), b.digest("tiny:latest"); d == "" || d != full || b.digest("other") != "" {
		t.Fatalf("digests: tiny %q, tiny:latest %q, other %q", d, full, b.digest("other"))
	}
}

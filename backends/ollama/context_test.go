package ollama

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/planrun/planrun/backends"
)

// The context a request gets: the num_ctx it sends, else the Modelfile's, else what
// /api/ps reports, each capped at the trained context; unknown without any of them.
func TestContextLength(t *testing.T) {
	for _, tc := range []struct {
		name      string
		extra     map[string]any
		params    string
		psContext int
		want      int
		ok        bool
	}{
		{"modelfile", nil, "num_ctx                        512\nstop \"x\"", 0, 512, true},
		{"request options win", map[string]any{"options": map[string]any{"num_ctx": 1024.0}}, "num_ctx 512", 0, 1024, true},
		{"capped at trained", map[string]any{"options": map[string]any{"num_ctx": 9000.0}}, "", 0, 2048, true},
		{"loaded model", nil, "", 768, 768, true},
		{"default unknown: trained context only", nil, "", 0, 2048, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/show":
					json.NewEncoder(w).Encode(map[string]any{"parameters": tc.params,
						"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 2048}})
				case "/api/ps":
					json.NewEncoder(w).Encode(map[string]any{"models": []map[string]any{{"name": "m:latest", "context_length": tc.psContext}}})
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			b, err := New(backends.Config{Kind: "ollama", Name: "ollama.t", URL: srv.URL, ExtraFields: tc.extra})
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := b.ContextLength(context.Background(), "m"); n != tc.want || ok != tc.ok {
				t.Fatalf("ContextLength = %d, %v; want %d, %v", n, ok, tc.want, tc.ok)
			}
		})
	}
}

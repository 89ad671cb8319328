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
		showFails bool
	}{
		{"modelfile", nil, "num_ctx                        512\nstop \"x\"", 0, 512, true, false},
		{"request options win", map[string]any{"options": map[string]any{"num_ctx": 1024.0}}, "num_ctx 512", 0, 1024, true, false},
		{"capped at trained", map[string]any{"options": map[string]any{"num_ctx": 9000.0}}, "", 0, 2048, true, false},
		{"loaded model", nil, "", 768, 768, true, false},
		{"default unknown: trained context only", nil, "", 0, 2048, true, false},
		// num_ctx as Go code or a decoder gives it.
		{"request options, int", map[string]any{"options": map[string]any{"num_ctx": 1000}}, "num_ctx 512", 0, 1000, true, false},
		{"request options, int64", map[string]any{"options": map[string]any{"num_ctx": int64(900)}}, "num_ctx 512", 0, 900, true, false},
		{"request options, not a number", map[string]any{"options": map[string]any{"num_ctx": "big"}}, "num_ctx 512", 0, 512, true, false},
		{"no /api/show", nil, "num_ctx 512", 768, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/show":
					if tc.showFails {
						http.Error(w, "boom", http.StatusInternalServerError)
						return
					}
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

package mockserver

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// Every /v1 and /api path the mock serves is in Endpoints (which mock-server -h lists),
// and answers something other than 404 or 405.
func TestEndpointsAreServed(t *testing.T) {
	srv := httptest.NewServer(New(Config{RecordTruth: true}))
	defer srv.Close()
	v1, api := Endpoints("/v1"), Endpoints("/api")
	for _, want := range []string{"/v1/responses", "/v1/embeddings", "/api/embed", "/v1/chat/completions", "/api/chat"} {
		if !slices.Contains(append(v1, api...), want) {
			t.Errorf("Endpoints lack %s: %q %q", want, v1, api)
		}
	}
	for _, r := range (&Server{}).routes() {
		method, path, _ := strings.Cut(r.pattern, " ")
		if strings.Contains(path, "{") {
			path = "/"
		}
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{"model":"mock","input":"x","prompt":"x","messages":[{"role":"user","content":"x"}],"max_tokens":1,"stream":false}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			t.Errorf("%s: %s", r.pattern, resp.Status)
		}
	}
}

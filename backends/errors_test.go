package backends_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// Each non-2xx status gets its class and a message a person can act on.
func TestStatusError(t *testing.T) {
	u, _ := url.Parse("http://user:pw@backend.test/v1/chat")
	for _, c := range []struct {
		name       string
		keyEnv     string
		status     int
		retryAfter string
		body       string
		class      backends.ErrorClass
		msg        string
	}{
		{"401 no key", "", 401, "", "", backends.ErrUnauthorized,
			"the server refused the request (401 Unauthorized) and no key was sent: set api_key_env on backend line.t to the environment variable holding the key; it is sent as the header `Authorization: Bearer <key>`."},
		{"401 key", "K", 401, "", `{"error":{"message":"invalid key"}}`, backends.ErrUnauthorized,
			"the server refused the key (401 Unauthorized): it must be sent as the header `Authorization: Bearer <key>`; the key was read from $K: check that it holds a valid key. Server said: invalid key."},
		{"403 key", "K", 403, "", "", backends.ErrForbidden,
			"the server refused the key (403 Forbidden): it must be sent as the header `Authorization: Bearer <key>`; the key was read from $K: check that it holds a valid key allowed to use this model."},
		{"403 no key", "", 403, "", "", backends.ErrForbidden,
			"the server refused the request (403 Forbidden) and no key was sent: set api_key_env on backend line.t to the environment variable holding the key; it is sent as the header `Authorization: Bearer <key>`."},
		{"404", "", 404, "", `{"error":"model 'x' not found!"}`, backends.ErrNotFound,
			"not found (404 Not Found) at http://user:xxxxx@backend.test/v1/chat. Server said: model 'x' not found!"},
		{"429 retry", "", 429, "7", "", backends.ErrRateLimited,
			"rate limited (429 Too Many Requests); the server asks to retry after 7: lower the concurrency or request rate."},
		{"429", "", 429, "", "", backends.ErrRateLimited,
			"rate limited (429 Too Many Requests): lower the concurrency or request rate."},
		{"500", "", 500, "30", "upstream\n  down", backends.ErrServer,
			"server error (500 Internal Server Error). Server said: upstream down."},
		{"499", "", 499, "30", "", backends.ErrHTTP4xx, "the server rejected the request (499 )."},
		{"422", "", 422, "", `{"detail":[{"msg":"field required"}]}`, backends.ErrHTTP4xx,
			`the server rejected the request (422 Unprocessable Entity). Server said: [{"msg":"field required"}].`},
	} {
		t.Run(c.name, func(t *testing.T) {
			core := backends.NewCore(backends.Config{Name: "line.t", URL: "http://backend.test", APIKeyEnv: c.keyEnv, Getenv: env{}.get})
			resp := &http.Response{StatusCode: c.status, Header: http.Header{}, Request: &http.Request{URL: u}}
			if c.retryAfter != "" {
				resp.Header.Set("Retry-After", c.retryAfter)
			}
			e := core.StatusError(resp, []byte(c.body))
			if e.Class != c.class || e.Status != c.status || e.Message != c.msg {
				t.Fatalf("got %s (%d): %q\nwant %s (%d): %q", e.Class, e.Status, e.Message, c.class, c.status, c.msg)
			}
			wantRetry := ""
			if c.class == backends.ErrRateLimited || c.class == backends.ErrServer {
				wantRetry = c.retryAfter
			}
			if e.RetryAfter != wantRetry {
				t.Fatalf("RetryAfter %q, want %q", e.RetryAfter, wantRetry)
			}
		})
	}
}

// ServerMessage reads each server's error shape, collapses white space and bounds the length.
func TestServerMessage(t *testing.T) {
	long := strings.Repeat("x", 299) + "é" + "tail" // the 300-byte cut falls inside é
	for _, c := range []struct{ body, want string }{
		{`{"error":"model not found"}`, "model not found"},                     // Ollama
		{`{"error":{"message":"bad key","type":"auth"}}`, "bad key"},           // OpenAI
		{`{"object":"error","message":"too long"}`, "too long"},                // vLLM
		{`{"detail":"Not Found"}`, "Not Found"},                                // FastAPI
		{`{"detail":{"loc":"body"}}`, `{"loc":"body"}`},                        // FastAPI validation
		{`{"error":"","message":"fallback"}`, "fallback"},                      // an empty error string is no message
		{`{"error":{"message":""},"detail":"d"}`, "d"},                         // nor an empty message
		{`{"other":1}`, `{"other":1}`},                                         // JSON without a message: the body
		{"<html>\n  Bad   Gateway </html>", "<html> Bad Gateway </html>"},      // not JSON
		{strings.Repeat("y", 300), strings.Repeat("y", 300)},                   // exactly the limit
		{long, strings.Repeat("x", 299) + "… (truncated)"},                     // cut on a rune boundary
		{strings.Repeat("z", 301), strings.Repeat("z", 300) + "… (truncated)"}, // one past the limit
		{strings.Repeat("\x80", 301), "… (truncated)"},                         // no rune start at all: cut to nothing
	} {
		if got := backends.ServerMessage([]byte(c.body)); got != c.want {
			t.Errorf("ServerMessage(%.40q) = %q, want %q", c.body, got, c.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	if got := backends.Excerpt([]byte("data: {\"a\"\n")); got != `"data: {\"a\"\n"` {
		t.Errorf("Excerpt = %s", got)
	}
	if got := backends.Excerpt([]byte(strings.Repeat("a", 81))); got != `"`+strings.Repeat("a", 80)+`… (truncated)"` {
		t.Errorf("Excerpt of 81 bytes = %s", got)
	}
}

func TestErrorString(t *testing.T) {
	e := &backends.Error{Class: backends.ErrServer, Message: "down"}
	if e.Error() != "5xx: down" {
		t.Fatalf("Error() = %q", e.Error())
	}
}

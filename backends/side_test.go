package backends_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// Side requests (GetJSON, PostJSON, PostStream): the backend's headers and key go out,
// and their failures get the classes and words of measured requests.

type seen struct {
	method, contentType, accept, auth, extra, body string
}

func sideServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *[]seen) {
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("Authorization"), r.Header.Get("X-Extra"), string(b)})
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func sideCore(url string, key string, to backends.Timeouts) *backends.Core {
	cfg := backends.Config{Name: "line.t", URL: url, Headers: map[string]string{"X-Extra": "e"}, Timeouts: to}
	if key != "" {
		cfg.APIKeyEnv, cfg.Getenv = "K", env{"K": key}.get
	}
	return backends.NewCore(cfg)
}

func TestGetJSONAndPostJSON(t *testing.T) {
	srv, got := sideServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"models":["a","b"]}`)) })
	c := sideCore(srv.URL, "sk-2", backends.Timeouts{}) // no total limit: the default bounds it
	var v struct{ Models []string }
	if e := c.GetJSON(context.Background(), srv.URL+"/models", &v); e != nil || len(v.Models) != 2 {
		t.Fatalf("GetJSON: %v, %v", e, v)
	}
	if e := c.PostJSON(context.Background(), srv.URL+"/show", map[string]string{"name": "a"}, &v); e != nil {
		t.Fatalf("PostJSON: %v", e)
	}
	want := []seen{
		{"GET", "", "application/json", "Bearer sk-2", "e", ""},
		{"POST", "application/json", "application/json", "Bearer sk-2", "e", `{"name":"a"}`},
	}
	for i := range want {
		if (*got)[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, (*got)[i], want[i])
		}
	}
}

func TestSideRequestFailures(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv, got := sideServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"no model for key sk-3"}`))
		case "/html":
			w.Write([]byte("<html>nope</html>"))
		case "/cut":
			w.Header().Set("Content-Length", "100")
			w.Write([]byte(`{"models":`))
		case "/slow-headers":
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		case "/slow-body":
			w.Write([]byte(`{"models":`))
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
	})
	c := sideCore(srv.URL, "sk-3", backends.Timeouts{Total: 50 * ms})
	ctx := context.Background()
	var v any
	for _, tc := range []struct {
		path, want string
	}{
		{"/missing", "404: not found (404 Not Found) at " + srv.URL + "/missing. Server said: no model for key [redacted]."},
		{"/html", "malformed: GET " + srv.URL + `/html: the answer is not the JSON expected (invalid character '<' looking for beginning of value): "<html>nope</html>"`},
		{"/cut", "stream_cut: GET " + srv.URL + "/cut: the answer was cut: unexpected EOF"},
		{"/slow-headers", "timeout: the request took longer than 50ms (timeouts.total)"},
		{"/slow-body", "timeout: the request took longer than 50ms (timeouts.total)"},
	} {
		e := c.GetJSON(ctx, srv.URL+tc.path, &v)
		if e == nil || e.Error() != tc.want {
			t.Errorf("GET %s: %v\nwant %s", tc.path, e, tc.want)
		}
	}
	if e := c.GetJSON(ctx, srv.URL+"/html", &v); e.Status != 200 {
		t.Errorf("malformed answer: status %d, want 200 kept", e.Status)
	}
	if e := c.PostJSON(ctx, srv.URL+"/missing", func() {}, &v); e == nil || e.Class != backends.ErrOther || !strings.Contains(e.Message, "unsupported type") {
		t.Errorf("PostJSON of a body JSON cannot hold: %v", e)
	}
	if e := c.GetJSON(ctx, "http://bad host/", &v); e == nil || e.Class != backends.ErrOther {
		t.Errorf("GetJSON of a bad URL: %v", e)
	}
	n := len(*got)
	noKey := backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL, APIKeyEnv: "K", Getenv: env{}.get})
	if e := noKey.GetJSON(ctx, srv.URL+"/html", &v); e == nil || e.Class != backends.ErrMissingKey {
		t.Errorf("GetJSON without its key: %v", e)
	}
	if _, e := noKey.PostStream(ctx, srv.URL+"/html", nil); e == nil || e.Class != backends.ErrMissingKey {
		t.Errorf("PostStream without its key: %v", e)
	}
	if len(*got) != n {
		t.Errorf("a request went out without its key")
	}
}

func TestPostStream(t *testing.T) {
	srv, got := sideServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, "pull sk-4 failed", 500)
			return
		}
		w.Write([]byte("{\"status\":\"a\"}\n{\"status\":\"b\"}\n"))
	})
	c := sideCore(srv.URL, "sk-4", backends.Timeouts{Total: time.Nanosecond}) // a stream is bounded by ctx only
	body, e := c.PostStream(context.Background(), srv.URL+"/pull", map[string]string{"model": "m"})
	if e != nil {
		t.Fatal(e)
	}
	b, _ := io.ReadAll(body)
	body.Close()
	if string(b) != "{\"status\":\"a\"}\n{\"status\":\"b\"}\n" || (*got)[0].body != `{"model":"m"}` || (*got)[0].auth != "Bearer sk-4" {
		t.Fatalf("read %q; server saw %+v", b, (*got)[0])
	}
	if _, e := c.PostStream(context.Background(), srv.URL+"/missing", nil); e == nil || e.Error() != "5xx: server error (500 Internal Server Error). Server said: pull [redacted] failed." {
		t.Fatalf("PostStream of a failing pull: %v", e)
	}
}

// A side request of a stopped run is canceled, not timed out.
func TestSideRequestCanceled(t *testing.T) {
	srv, _ := sideServer(t, func(w http.ResponseWriter, r *http.Request) {})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stop"))
	var v any
	if e := sideCore(srv.URL, "", backends.Timeouts{}).GetJSON(ctx, srv.URL, &v); e == nil || e.Error() != "canceled: the run was interrupted: stop" {
		t.Fatalf("GetJSON on a stopped run: %v", e)
	}
}

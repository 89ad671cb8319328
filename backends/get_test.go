package backends

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Warm leaves n connections open in the pool: n requests sent at once afterwards open
// none of their own.
func TestWarmOpensConnectionsAhead(t *testing.T) {
	var opened, posts atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			<-release // held, so the requests overlap and each needs a connection
		}
		w.Write([]byte(`{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := NewCore(Config{Kind: "openai", Name: "openai.t", URL: srv.URL})
	if n := c.Warm(context.Background(), srv.URL+"/models", 8); n != 8 || opened.Load() != 8 {
		t.Fatalf("Warm opened %d (the server saw %d connections), want 8", n, opened.Load())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Client().Post(srv.URL+"/v1/chat/completions", "application/json", nil)
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for posts.Load() < 8 { // all 8 held at once, each on a connection of its own
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := opened.Load(); n != 8 {
		t.Fatalf("8 overlapping requests after Warm(8): the server saw %d connections in all, want 8", n)
	}
}

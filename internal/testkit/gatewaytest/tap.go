package gatewaytest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Exchange is one request that passed through a Tap: what the gateway sent the engine
// and what the engine answered.
type Exchange struct {
	Path     string
	Header   http.Header
	Body     []byte
	Status   int
	Response []byte
}

// Tap is a recording reverse proxy between the gateway and a real engine, so a test can
// see exactly what reaches the engine (which fields, which model, which headers).
type Tap struct {
	URL string // the tap's base URL; append the engine's path (e.g. /v1)

	mu  sync.Mutex
	got []Exchange
}

// NewTap starts a tap in front of upstream (the engine's base URL, without /v1), closed
// when the test ends.
func NewTap(t testing.TB, upstream string) *Tap {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	tap := &Tap{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // pass each SSE chunk on as it comes
	rp.ModifyResponse = func(resp *http.Response) error {
		ex := resp.Request.Context().Value(exchangeKey{}).(*Exchange)
		ex.Status = resp.StatusCode
		resp.Body = &teeBody{ReadCloser: resp.Body, tap: tap, ex: ex}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		ex := &Exchange{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
		rp.ServeHTTP(w, r.WithContext(contextWith(r, ex)))
	}))
	t.Cleanup(srv.Close)
	tap.URL = srv.URL
	return tap
}

// Exchanges returns the exchanges whose response has been read to its end, in that order.
func (t *Tap) Exchanges() []Exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Exchange(nil), t.got...)
}

type exchangeKey struct{}

// teeBody keeps a copy of the engine's response and records the exchange once it ends.
type teeBody struct {
	io.ReadCloser
	tap  *Tap
	ex   *Exchange
	buf  bytes.Buffer
	once sync.Once
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	if err != nil {
		b.record()
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.record()
	return b.ReadCloser.Close()
}

func (b *teeBody) record() {
	b.once.Do(func() {
		b.ex.Response = append([]byte(nil), b.buf.Bytes()...)
		b.tap.mu.Lock()
		b.tap.got = append(b.tap.got, *b.ex)
		b.tap.mu.Unlock()
	})
}

func contextWith(r *http.Request, ex *Exchange) context.Context {
	return context.WithValue(r.Context(), exchangeKey{}, ex)
}

// DataEvents are the data fields of an SSE stream as a tap recorded it (Exchange.Response),
// in order, the [DONE] marker left out: what a test decodes to see what the engine sent.
func DataEvents(sse []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(sse))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "[DONE]" {
			out = append(out, data)
		}
	}
	return out
}

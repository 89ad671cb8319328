package backends_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// heldTurn is a pacer's side of Request.Turn for the core's tests: Send holds the
// request's first write for hold, checking that the server has seen nothing of the
// request meanwhile, then makes it with its own start stamp; Due, the fallback, stamps
// at once. It counts both.
type heldTurn struct {
	hold    time.Duration
	arrived *atomic.Int32 // requests the server has begun to read

	mu           sync.Mutex
	sends, dues  int
	early, later int32 // arrivals when Send was called, and once it had held the write
	stamp        time.Time
}

func (h *heldTurn) Send(stamp backends.Clock, s backends.Sender) {
	early := h.arrived.Load()
	time.Sleep(h.hold)
	t := stamp.Now()
	h.mu.Lock()
	h.sends++
	h.early, h.later, h.stamp = early, h.arrived.Load(), t
	h.mu.Unlock()
	s.SendAt(t)
}

func (h *heldTurn) Due(c backends.Clock) time.Time {
	t := c.Now()
	h.mu.Lock()
	h.dues++
	h.stamp = t
	h.mu.Unlock()
	return t
}

func (h *heldTurn) request(id, prompt string) backends.Request {
	return backends.Request{ID: id, Prompt: prompt, Due: h.Due, Turn: h}
}

// countingServer answers linesHandler's stream, counting the requests it has begun to
// read and keeping the length of each body.
func countingServer(arrived *atomic.Int32, bodies chan<- int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		b, _ := io.ReadAll(r.Body)
		bodies <- len(b)
		w.WriteHeader(200)
		w.Write(line{Text: "a"}.bytes())
		w.Write(line{Done: true}.bytes())
	}
}

// With a Turn, the request is sent at once and its connection holds its first write for
// the turn: the server sees nothing until the turn makes it, the start stamp is the
// turn's, and the request's times count from it (the 30 ms hold is in none of them).
// Over plain HTTP/1 and HTTP/1 under TLS, a small body and one larger than the
// transport's write buffer (whose rest the request's own goroutine writes), and again
// on the pooled connection.
func TestTurnHoldsTheFirstWrite(t *testing.T) {
	const hold = 30 * time.Millisecond
	for _, tlsOn := range []bool{false, true} {
		for _, size := range []int{10, 300 << 10} {
			var arrived atomic.Int32
			bodies := make(chan int, 4)
			srv := httptest.NewUnstartedServer(countingServer(&arrived, bodies))
			var c *backends.Core
			if tlsOn {
				srv.StartTLS()
				tr := backends.NewTransport(backends.Timeouts{})
				tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
				c = backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL}, backends.WithHTTPClient(&http.Client{Transport: tr}))
			} else {
				srv.Start()
				c = backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL})
			}
			prompt := strings.Repeat("p", size)
			for i := range 2 {
				h := &heldTurn{hold: hold, arrived: &arrived}
				s := c.Do(context.Background(), &lineAdapter{core: c}, h.request("r", prompt))
				h.mu.Lock()
				sends, dues, early, later, stamp := h.sends, h.dues, h.early, h.later, h.stamp
				h.mu.Unlock()
				name := map[bool]string{false: "HTTP/1", true: "HTTP/1 under TLS"}[tlsOn]
				if s.Err != nil || s.Chunks != 1 {
					t.Fatalf("%s, %d bytes, request %d: error %v, %d chunks", name, size, i, s.Err, s.Chunks)
				}
				if sends != 1 || dues != 0 {
					t.Fatalf("%s, %d bytes, request %d: Send called %d times, Due %d: want the turn taken once, by the held write", name, size, i, sends, dues)
				}
				if early != int32(i) || later != int32(i) {
					t.Fatalf("%s, %d bytes, request %d: the server had begun %d requests when Send came and %d after its hold, want %d: the write was not held", name, size, i, early, later, i)
				}
				if !s.Start.Equal(stamp) {
					t.Fatalf("%s, %d bytes, request %d: start %v, want the turn's stamp %v", name, size, i, s.Start, stamp)
				}
				if s.Wrote <= 0 || s.Headers <= 0 || s.Headers >= hold || s.End >= hold {
					t.Fatalf("%s, %d bytes, request %d: wrote %v, headers %v, end %v: want them from the turn's stamp, none as long as the %v hold", name, size, i, s.Wrote, s.Headers, s.End, hold)
				}
				if n := <-bodies; n < size {
					t.Fatalf("%s, %d bytes, request %d: the server read a %d-byte body", name, size, i, n)
				}
			}
			srv.Close()
		}
	}
}

// Where the connection cannot hold the write, the request waits for its turn in Due
// instead: HTTP/2 (its streams share the connection), and a request that never gets a
// connection (refused), whose failure is stamped at its turn.
func TestTurnFallsBackToDue(t *testing.T) {
	var arrived atomic.Int32
	bodies := make(chan int, 4)
	srv := httptest.NewUnstartedServer(countingServer(&arrived, bodies))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	tr := backends.NewTransport(backends.Timeouts{})
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c := backends.NewCore(backends.Config{Name: "line.t", URL: srv.URL}, backends.WithHTTPClient(&http.Client{Transport: tr}))
	h := &heldTurn{arrived: &arrived}
	s := c.Do(context.Background(), &lineAdapter{core: c}, h.request("r", "p"))
	if s.Err != nil || h.sends != 0 || h.dues != 1 || !s.Start.Equal(h.stamp) {
		t.Fatalf("HTTP/2: error %v, Send %d, Due %d, start %v against Due's %v: want the turn taken once in Due", s.Err, h.sends, h.dues, s.Start, h.stamp)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c = backends.NewCore(backends.Config{Name: "line.t", URL: "http://" + addr})
	h = &heldTurn{arrived: &arrived}
	s = c.Do(context.Background(), &lineAdapter{core: c}, h.request("r", "p"))
	if s.Err == nil || s.Err.Class != backends.ErrRefused || h.sends != 0 || h.dues != 1 || !s.Start.Equal(h.stamp) {
		t.Fatalf("refused: error %v, Send %d, Due %d, start %v against Due's %v: want the failure stamped at its turn, in Due", s.Err, h.sends, h.dues, s.Start, h.stamp)
	}
}

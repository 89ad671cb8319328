//go:build linux

package mockserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// completion is a whole HTTP/1.1 completions request named id.
func completion(id string) string {
	body := `{"model":"mock","prompt":"hi","max_tokens":1}`
	return "POST /v1/completions HTTP/1.1\r\nHost: mock\r\nX-Request-Id: " + id +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// answered reads one response from r and waits until the server has recorded id's truth.
func answered(t *testing.T, s *Server, r *bufio.Reader, id string) Truth {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if tr, ok := s.Truth(id); ok {
			return tr
		}
	}
	t.Fatalf("no truth for %s", id)
	return Truth{}
}

// heldListener accepts like its listener, except that it hands out the first connection
// after hold only once release is closed: the server then reads that one's request after
// a later connection's.
type heldListener struct {
	net.Listener
	armed   atomic.Bool
	release chan struct{}
	out     chan net.Conn
}

func newHeldListener(ln net.Listener) *heldListener {
	l := &heldListener{Listener: ln, release: make(chan struct{}), out: make(chan net.Conn)}
	go func() {
		defer close(l.out)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if l.armed.CompareAndSwap(true, false) {
				go func() { <-l.release; l.out <- c }()
				continue
			}
			l.out <- c
		}
	}()
	return l
}

func (l *heldListener) Accept() (net.Conn, error) {
	c, ok := <-l.out
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}

// A request's arrival is the kernel's receive stamp of its first bytes, taken before the
// server reads them: request a is written before b, on another connection, but the server
// gets to a only once b is answered. The kernel stamps keep the order the requests were
// written in; the handlers' own readings (Received) have it the other way round. A second
// request on b's connection gets a stamp of its own, not the one b's first request left.
func TestArrivalIsTheKernelStampOfTheFirstBytes(t *testing.T) {
	s := New(Config{RecordTruth: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stampListening(ln) // as Serve does for a TCP listener it is given itself
	held := newHeldListener(ln)
	stop := s.Serve(held)
	defer stop()
	addr := ln.Addr().String()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	// The kernel turns its stamping on a moment after the first socket asks: wait for it.
	cw, rw := dial()
	for i := 0; ; i++ {
		id := "warm" + strconv.Itoa(i)
		io.WriteString(cw, completion(id))
		if answered(t, s, rw, id).ArrivedKernel {
			break
		}
		if i == 1000 {
			t.Fatal("no kernel receive stamps")
		}
	}

	held.armed.Store(true)
	ca, ra := dial()
	cb, rb := dial()
	io.WriteString(ca, completion("a"))
	io.WriteString(cb, completion("b"))
	tb := answered(t, s, rb, "b")
	close(held.release)
	ta := answered(t, s, ra, "a")
	io.WriteString(cb, completion("b2"))
	tb2 := answered(t, s, rb, "b2")

	for _, tr := range []Truth{ta, tb, tb2} {
		if !tr.ArrivedKernel {
			t.Fatalf("%s: no kernel stamp", tr.ID)
		}
		if tr.Arrived.After(tr.Received) {
			t.Fatalf("%s: arrived %v after the handler's reading %v", tr.ID, tr.Arrived, tr.Received)
		}
		if sum := tr.Summarize(); !sum.Arrived.Equal(tr.Arrived) || !sum.ArrivedKernel {
			t.Fatalf("%s: summary's arrival %v (kernel %v), want %v", tr.ID, sum.Arrived, sum.ArrivedKernel, tr.Arrived)
		}
	}
	if !tb.Received.Before(ta.Received) {
		t.Fatalf("the handler read a (%v) before b (%v): the test did not hold a back", ta.Received, tb.Received)
	}
	if !ta.Arrived.Before(tb.Arrived) {
		t.Fatalf("a arrived %v, not before b's %v, though it was written first", ta.Arrived, tb.Arrived)
	}
	if !tb2.Arrived.After(tb.Received) {
		t.Fatalf("b2 arrived %v, before b (its connection's first request) was even read at %v", tb2.Arrived, tb.Received)
	}
}

// Without a kernel stamp (a Unix socket) a request's arrival is the handler's reading.
func TestArrivalWithoutAKernelStamp(t *testing.T) {
	s := New(Config{RecordTruth: true})
	ln, err := net.Listen("unix", t.TempDir()+"/mock.sock")
	if err != nil {
		t.Fatal(err)
	}
	stop := s.Serve(ln)
	defer stop()
	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, completion("u"))
	tr := answered(t, s, bufio.NewReader(c), "u")
	if tr.ArrivedKernel || !tr.Arrived.Equal(tr.Received) {
		t.Fatalf("arrived %v (kernel %v), want the handler's %v", tr.Arrived, tr.ArrivedKernel, tr.Received)
	}
}

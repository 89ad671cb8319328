package backends

import (
	"context"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// The transport's connections outlive neither a silent peer nor their use: the kernel
// sends keep-alive probes once a connection has been 30 s without traffic (so one to a
// vanished server is found dead; a zero period would be Go's default, 15 s), and a
// pooled connection idle for 90 s is closed (0 would keep every connection of the run
// open until the process ends).
func TestTransportConnectionLifetimes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1)) // until the client closes
		}
	}()
	tr := NewTransport(Timeouts{Connect: 5 * time.Second})
	if tr.IdleConnTimeout != 90*time.Second {
		t.Errorf("idle pooled connections closed after %v, want 90s", tr.IdleConnTimeout)
	}
	c, err := tr.DialContext(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc, ok := c.(*turnConn)
	if !ok || tc.raw == nil {
		t.Fatalf("dialled a %T, want a *turnConn that can hold a write, with its raw connection", c)
	}
	rc, ok := tc.Conn.(*rxConn)
	if !ok {
		t.Fatalf("dialled a %T under the turnConn, want the receive-timestamping *rxConn", tc.Conn)
	}
	raw, err := rc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 30},
	} {
		var got int
		var gerr error
		if err := raw.Control(func(fd uintptr) { got, gerr = syscall.GetsockoptInt(int(fd), o.level, o.opt) }); err != nil || gerr != nil {
			t.Fatalf("%s: %v %v", o.name, err, gerr)
		}
		if got != o.want {
			t.Errorf("%s = %d, want %d", o.name, got, o.want)
		}
	}
}

// A backend given a source address (a load agent's own 127.0.0.x) connects from it: on
// Linux every 127.0.0.0/8 address is loopback, each with its own ephemeral ports.
func TestCoreBindsItsSourceAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	from := make(chan string, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			from <- c.RemoteAddr().(*net.TCPAddr).IP.String()
			c.Close()
		}
	}()
	c := NewCore(Config{Name: "openai.src", URL: "http://" + l.Addr().String(), SourceAddr: "127.0.0.7", Timeouts: Timeouts{Connect: 5 * time.Second}})
	conn, err := c.Client().Transport.(*http.Transport).DialContext(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := <-from; got != "127.0.0.7" {
		t.Fatalf("connected from %s, want the source address 127.0.0.7", got)
	}
}

//go:build linux

package mockserver

import (
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/planrun/planrun/internal/rxstamp"
)

// rxConn is an accepted TCP connection that asks the kernel to timestamp every packet it
// receives (SO_TIMESTAMPNS) and keeps the stamp of the first data read since the last
// request ended: when the request's first bytes reached the socket, however late the
// server's goroutine got to read them. (The client side does the same for responses:
// backends/rxstamp_linux.go.)
type rxConn struct {
	*rxstamp.Conn

	// first is the kernel's receive time (Unix ns) of the first data read since the last
	// request ended (0: none yet).
	first atomic.Int64
}

// stampListening enables receive timestamps on a TCP listener, so that accepted
// connections have them before they are accepted: a request written at once on a new
// connection has its first bytes stamped too.
func stampListening(ln net.Listener) { rxstamp.EnableListener(ln) }

// stampConn enables receive timestamps on c; on any failure it returns c unchanged and
// the request's arrival is the handler's own reading.
func stampConn(c net.Conn) net.Conn {
	rc := rxstamp.Enable(c)
	if rc == nil {
		return c
	}
	return &rxConn{Conn: rc}
}

// Read reads like net.TCPConn.Read and keeps the kernel's receive stamp of the first
// data since the last request ended. That first read takes one byte: a TCP read's stamp
// is that of the last packet it drains. (The kernel still gives a packet that it merged
// into one waiting unread in the socket its own, later, stamp: a request written in parts
// that the server reads only once all have come arrives when its last part did.)
func (c *rxConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.first.Load() == 0 {
		p = p[:1]
	}
	n, ns, err := c.ReadStamped(p)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	if ns != 0 {
		c.first.CompareAndSwap(0, ns)
	}
	return n, nil
}

// arrival is the kernel's receive time of the current request's first bytes.
func (c *rxConn) arrival() (time.Time, bool) {
	ns := c.first.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// ended forgets the stamp: the connection's next data is the next request's (HTTP/1.1
// clients send it only once this response has ended, after the handler returns).
func (c *rxConn) ended() { c.first.Store(0) }

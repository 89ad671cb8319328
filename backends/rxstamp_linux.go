package backends

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/planrun/planrun/internal/rxstamp"
)

// rxConn is a TCP connection that asks the kernel to timestamp every received packet
// (SO_TIMESTAMPNS) and keeps the timestamp of the data its last Read returned. The
// timing core stamps a chunk with it instead of the moment its goroutine got to run, so
// a busy client (thousands of streams on two cores) does not add its own scheduling
// delay to TTFT and TPOT: the stamp is when the bytes reached this machine's socket.
type rxConn struct {
	*rxstamp.Conn

	// last is the kernel's receive time (Unix ns) of the newest data returned by Read.
	last atomic.Int64
}

// timestampConn enables receive timestamps on c; on any failure it returns c unchanged
// and the core stamps with its clock as before.
func timestampConn(c net.Conn) net.Conn {
	rc := rxstamp.Enable(c)
	if rc == nil {
		return c
	}
	return &rxConn{Conn: rc}
}

// Read reads like net.TCPConn.Read and records the kernel's receive timestamp.
func (c *rxConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, ns, err := c.ReadStamped(p)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, eof
	}
	if ns != 0 {
		c.last.Store(ns)
	}
	return n, nil
}

// RxTime is the kernel's receive time of the data the last Read returned.
func (c *rxConn) RxTime() (time.Time, bool) {
	ns := c.last.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

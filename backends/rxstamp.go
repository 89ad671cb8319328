package backends

import (
	"crypto/tls"
	"io"
	"net"
	"time"
)

var eof = io.EOF

// rxTimer is a connection that knows when the data of its last Read reached the machine
// (rxConn on Linux).
type rxTimer interface {
	RxTime() (time.Time, bool)
}

// rxSource returns the receive-time source of the connection a request was sent on:
// the connection itself, or the one under TLS, under its turnConn.
func rxSource(c net.Conn) rxTimer {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if t, ok := c.(*turnConn); ok {
		c = t.Conn
	}
	r, _ := c.(rxTimer)
	return r
}

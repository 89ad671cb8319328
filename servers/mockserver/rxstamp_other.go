//go:build !linux

package mockserver

import (
	"net"
	"time"
)

// stampConn is a no-op where the kernel's receive timestamps are not wired up: a
// request's arrival is the handler's own reading.
func stampConn(c net.Conn) net.Conn { return c }

// stampListening is a no-op here.
func stampListening(net.Listener) {}

// rxConn is never made here; arrival and ended exist so the server builds.
type rxConn struct{ net.Conn }

func (c *rxConn) arrival() (time.Time, bool) { return time.Time{}, false }
func (c *rxConn) ended()                     {}

//go:build linux

package mockserver

import (
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// rxConn is an accepted TCP connection that asks the kernel to timestamp every packet it
// receives (SO_TIMESTAMPNS) and keeps the stamp of the first data read since the last
// request ended: when the request's first bytes reached the socket, however late the
// server's goroutine got to read them. (The client side does the same for responses:
// backends/rxstamp_linux.go.)
type rxConn struct {
	*net.TCPConn
	raw syscall.RawConn

	// first is the kernel's receive time (Unix ns) of the first data read since the last
	// request ended (0: none yet).
	first atomic.Int64

	// Scratch for the raw read callback, prebound so a Read allocates nothing.
	p    []byte
	oob  [64]byte
	n    int
	oobn int
	err  error
	read func(fd uintptr) bool
}

// stampListening enables receive timestamps on a TCP listener, so that the kernel stamps
// packets from the start (it turns its stamping on for the first socket that asks, a
// moment later) and accepted connections inherit the option before they are accepted: a
// request written at once on a new connection has its first bytes stamped too.
func stampListening(ln net.Listener) {
	if tl, ok := ln.(*net.TCPListener); ok {
		if raw, err := tl.SyscallConn(); err == nil {
			raw.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
			})
		}
	}
}

// stampConn enables receive timestamps on c; on any failure it returns c unchanged and
// the request's arrival is the handler's own reading.
func stampConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	rc := &rxConn{TCPConn: tc, raw: raw}
	rc.read = rc.recv
	return rc
}

func (c *rxConn) recv(fd uintptr) bool {
	c.n, c.oobn, _, _, c.err = syscall.Recvmsg(int(fd), c.p, c.oob[:], 0)
	return c.err != syscall.EAGAIN
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
	c.p = p
	err := c.raw.Read(c.read)
	c.p = nil
	if err == nil {
		err = c.err
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if c.n == 0 {
		return 0, io.EOF
	}
	if ts, ok := parseTimestamp(c.oob[:c.oobn]); ok {
		c.first.CompareAndSwap(0, ts)
	}
	return c.n, nil
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

// parseTimestamp finds SCM_TIMESTAMPNS in a control message buffer without allocating.
func parseTimestamp(oob []byte) (int64, bool) {
	const hdr = int(unsafe.Sizeof(syscall.Cmsghdr{}))
	const align = int(unsafe.Sizeof(uintptr(0)))
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0, false
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l >= hdr+int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano(), true
		}
		next := (l + align - 1) &^ (align - 1)
		if next > len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

package rxstamp

import (
	"net"
	"syscall"
	"unsafe"
)

// Conn is a TCP connection whose received packets the kernel timestamps.
type Conn struct {
	*net.TCPConn
	raw syscall.RawConn

	// Scratch for the raw read callback, prebound so a read allocates nothing.
	p    []byte
	oob  [64]byte
	n    int
	oobn int
	err  error
	read func(fd uintptr) bool
}

// Enable turns receive timestamps on for c; nil where c is not TCP or the kernel refuses,
// and the caller then reads c as it is.
func Enable(c net.Conn) *Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil || setStamping(raw) != nil {
		return nil
	}
	rc := &Conn{TCPConn: tc, raw: raw}
	rc.read = rc.recv
	return rc
}

// EnableListener turns receive timestamps on for a TCP listener, so that the kernel stamps
// packets from the start (it turns its stamping on for the first socket that asks, a
// moment later) and accepted connections inherit the option before they are accepted.
func EnableListener(ln net.Listener) {
	if tl, ok := ln.(*net.TCPListener); ok {
		if raw, err := tl.SyscallConn(); err == nil {
			setStamping(raw)
		}
	}
}

func setStamping(raw syscall.RawConn) error {
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

func (c *Conn) recv(fd uintptr) bool {
	c.n, c.oobn, _, _, c.err = syscall.Recvmsg(int(fd), c.p, c.oob[:], 0)
	return c.err != syscall.EAGAIN
}

// ReadStamped reads into p (not empty) as a TCP read does and returns the kernel's receive
// time (Unix ns) of the data it returned: 0 where the kernel gave none. n = 0 with a nil
// error is the end of the stream; an error is a *net.OpError.
func (c *Conn) ReadStamped(p []byte) (n int, ns int64, err error) {
	c.p = p
	err = c.raw.Read(c.read)
	c.p = nil
	if err == nil {
		err = c.err
	}
	if err != nil {
		return 0, 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if c.n == 0 {
		return 0, 0, nil
	}
	ns, _ = Parse(c.oob[:c.oobn])
	return c.n, ns, nil
}

// Parse finds SCM_TIMESTAMPNS in a control message buffer without allocating.
func Parse(oob []byte) (int64, bool) {
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

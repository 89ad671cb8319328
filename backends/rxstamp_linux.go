package backends

import (
	"net"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// rxConn is a TCP connection that asks the kernel to timestamp every received packet
// (SO_TIMESTAMPNS) and keeps the timestamp of the data its last Read returned. The
// timing core stamps a chunk with it instead of the moment its goroutine got to run, so
// a busy client (thousands of streams on two cores) does not add its own scheduling
// delay to TTFT and TPOT: the stamp is when the bytes reached this machine's socket.
type rxConn struct {
	*net.TCPConn
	raw syscall.RawConn

	// last is the kernel's receive time (Unix ns) of the newest data returned by Read.
	last atomic.Int64

	// Scratch for the raw read callback, prebound so a Read allocates nothing.
	p    []byte
	oob  [64]byte
	n    int
	oobn int
	err  error
	read func(fd uintptr) bool
}

// timestampConn enables receive timestamps on c; on any failure it returns c unchanged
// and the core stamps with its clock as before.
func timestampConn(c net.Conn) net.Conn {
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

// Read reads like net.TCPConn.Read and records the kernel's receive timestamp.
func (c *rxConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
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
		return 0, eof
	}
	if ts, ok := parseTimestamp(c.oob[:c.oobn]); ok {
		c.last.Store(ts)
	}
	return c.n, nil
}

// RxTime is the kernel's receive time of the data the last Read returned.
func (c *rxConn) RxTime() (time.Time, bool) {
	ns := c.last.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// parseTimestamp finds SCM_TIMESTAMPNS in a control message buffer without allocating.
func parseTimestamp(oob []byte) (int64, bool) {
	const hdr = int(unsafe.Sizeof(syscall.Cmsghdr{}))
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
		next := (l + int(unsafe.Sizeof(uintptr(0))) - 1) &^ (int(unsafe.Sizeof(uintptr(0))) - 1)
		if next > len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

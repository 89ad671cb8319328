package backends

import "syscall"

// rawWrites: a held write goes out in one write(2) on the pacer's goroutine.
const rawWrites = true

// rawWrite is one write(2) of c.p: EAGAIN (a full socket buffer) writes nothing, and
// the caller writes the rest the usual way.
func (c *turnConn) rawWrite(fd uintptr) bool {
	for {
		n, err := syscall.Write(int(fd), c.p)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			n, err = 0, nil
		}
		c.n, c.err = max(n, 0), err
		return true
	}
}

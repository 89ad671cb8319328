package backends

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// Turn is a paced request's place in its pacer's schedule (Request.Turn). With it, the
// timing core sends the request before its time and its connection holds the request's
// first write: Send hands that write to the pacer, which makes it itself at the
// request's time, in schedule order, from one goroutine. No request's bytes then wait
// on another thread of the client (net/http's write loop of its connection, which the
// OS may deschedule between the request's start stamp and its write), so a burst
// reaches the server in the schedule's order and no later than the pacer wakes. A
// connection that cannot hold the write (HTTP/2, where requests share it) falls back
// to Request.Due.
type Turn interface {
	// Send runs s.SendAt at the request's time and in its turn, with the start stamp
	// read on stamp just before, and returns once it has run, on whichever goroutine ran
	// it (the pacer's, or this one when the request's time had passed).
	Send(stamp Clock, s Sender)
}

// Sender is a request's first write, held for its Turn.
type Sender interface {
	// SendAt makes the write, start being the request's start stamp.
	SendAt(start time.Time)
}

// turnConn is every connection the transport dials: it holds the first write of the
// request armed on it (by the watch's GotConn, for a request with a Turn) for that
// request's turn, and writes whatever else as it comes.
type turnConn struct {
	net.Conn
	armed atomic.Pointer[watch]
	// raw writes a held write without waiting on the socket (writeNow); nil where the
	// connection has no file descriptor.
	raw syscall.RawConn
	// Scratch for the raw write callback, prebound so a held write allocates nothing.
	p     []byte
	n     int
	err   error
	write func(fd uintptr) bool
}

func newTurnConn(c net.Conn) *turnConn {
	tc := &turnConn{Conn: c}
	if sc, ok := c.(syscall.Conn); ok && rawWrites {
		if raw, err := sc.SyscallConn(); err == nil {
			tc.raw = raw
		}
	}
	tc.write = tc.rawWrite
	return tc
}

// Write holds p for its request's turn when it is the first write of a request armed on
// this connection, and else writes it.
func (c *turnConn) Write(p []byte) (int, error) {
	if w := c.armed.Swap(nil); w != nil && w.state.CompareAndSwap(turnArmed, turnSending) {
		return w.sendFirst(c, p)
	}
	return c.Conn.Write(p)
}

// writeNow writes what of p the socket takes at once, without waiting for room, so the
// pacer's goroutine never blocks on one connection; the request's own goroutine writes
// the rest.
func (c *turnConn) writeNow(p []byte) (int, error) {
	if c.raw == nil {
		return c.Conn.Write(p)
	}
	c.p, c.n, c.err = p, 0, nil
	if err := c.raw.Write(c.write); err != nil {
		return 0, err
	}
	c.p = nil
	return c.n, c.err
}

// holdable is the connection under c whose first write a request's turn can hold: nil
// for HTTP/2, whose streams share one connection and its writes.
func holdable(c net.Conn) *turnConn {
	if t, ok := c.(*tls.Conn); ok {
		if t.ConnectionState().NegotiatedProtocol == "h2" {
			return nil
		}
		c = t.NetConn()
	}
	tc, _ := c.(*turnConn)
	return tc
}

// A request's turn, as its watch goes through it (watch.state): not taken; armed on a
// connection, whose first write will take it; being taken (by that write, or by a
// wait in Request.Due); taken, the start stamp set.
const (
	turnFree int32 = iota
	turnArmed
	turnSending
	turnTaken
)

// turnPoll is how often a request whose round trip ended while its held write was
// still waiting for its turn checks that it has been made.
const turnPoll = 20 * time.Microsecond

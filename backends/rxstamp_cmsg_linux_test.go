package backends

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/rxstamp"
)

// holdTimestamping keeps a timestamped socket open for the test and waits until the kernel
// stamps its packets: the first socket to ask turns stamping on through deferred work, so
// packets received just after it (a fresh test process, or after every such socket closed)
// can arrive unstamped. With one held open, the test's own socket sees stamping on.
func holdTimestamping(t *testing.T) {
	t.Helper()
	release, err := stampingOn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// TestMain holds stamping on for the whole test binary: the switch is system-wide, so
// whether a test's first packets were stamped otherwise depends on what else on the
// machine holds a timestamped socket (TestDoOnePacketOneStamp once read its headers and
// chunks on three clock stamps, in a package run with nothing else open).
func TestMain(m *testing.M) {
	release, err := stampingOn()
	if err != nil {
		fmt.Fprintln(os.Stderr, "backends tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	release()
	os.Exit(code)
}

// stampingOn opens a UDP socket with SO_TIMESTAMPNS and sends itself packets until one
// comes back stamped; release closes it.
func stampingOn() (release func(), err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return nil, err
	}
	release = func() { syscall.Close(fd) }
	fail := func(err error) (func(), error) { release(); return nil, err }
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1); err != nil {
		return fail(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail(err)
	}
	buf, oob := make([]byte, 1), make([]byte, 64)
	for range 200 {
		if err := syscall.Sendto(fd, []byte("w"), 0, sa); err != nil {
			return fail(err)
		}
		_, oobn, _, _, err := syscall.Recvmsg(fd, buf, oob, 0)
		if err != nil {
			return fail(err)
		}
		if _, ok := rxstamp.Parse(oob[:oobn]); ok {
			return release, nil
		}
		time.Sleep(time.Millisecond)
	}
	return fail(errors.New("the kernel stamped none of 200 packets on a socket with SO_TIMESTAMPNS"))
}

// A connection timestamps nothing before its first read, and a zero-length read is no read.
func TestRxConnBeforeAnyRead(t *testing.T) {
	holdTimestamping(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The peer closes only once the byte was read: a FIN queued behind the data would
	// be the newest packet, its stamp the one reported, or none.
	// It writes only once the dial returned: a byte that arrives before the dialer turned
	// stamping on carries no stamp (in use, a response follows the request sent after it).
	read, dialed := make(chan struct{}), make(chan struct{})
	go func() {
		if c, err := l.Accept(); err == nil {
			<-dialed
			c.Write([]byte("x"))
			<-read
			c.Close()
		}
	}()
	c, err := (&rxDialer{}).DialContext(context.Background(), "tcp", l.Addr().String())
	close(dialed)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rx := rxSource(c)
	if _, ok := rx.RxTime(); ok {
		t.Fatal("a receive time before any read")
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	buf := make([]byte, 4)
	if n, err := c.Read(buf); n != 1 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	close(read)
	if _, ok := rx.RxTime(); !ok {
		t.Fatal("no receive time after a read")
	}
	if n, err := c.Read(buf); n != 0 || err != eof {
		t.Fatalf("read after the peer closed: %d, %v; want io.EOF", n, err)
	}
	// A connection whose socket is gone keeps working without stamps.
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if got := timestampConn(raw); got != raw {
		t.Fatalf("timestampConn of a closed connection: %T, want it unchanged", got)
	}
}

func TestTimeoutErrorText(t *testing.T) {
	if got := (&timeoutError{phase: "idle", limit: 2 * time.Second}).Error(); got != "idle timeout after 2s" {
		t.Fatalf("timeoutError = %q", got)
	}
}

// A connection the peer resets reads as the reset, not as a clean end.
func TestRxConnReadsAReset(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dialed, reset := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(reset)
		if c, err := l.Accept(); err == nil {
			<-dialed
			c.(*net.TCPConn).SetLinger(0) // Close sends RST
			c.Close()
		}
	}()
	c, err := (&rxDialer{}).DialContext(context.Background(), "tcp", l.Addr().String())
	close(dialed)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-reset
	time.Sleep(10 * time.Millisecond) // the RST reaches the socket
	if _, err := c.Read(make([]byte, 4)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after a reset: %v, want ECONNRESET", err)
	}
}

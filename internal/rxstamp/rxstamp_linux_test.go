package rxstamp

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// cmsg is one control message: its header, then data, padded to the kernel's alignment.
func cmsg(level, typ int32, data []byte) []byte {
	const hdr = int(unsafe.Sizeof(syscall.Cmsghdr{}))
	b := make([]byte, syscall.CmsgSpace(len(data)))
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(hdr + len(data))
	copy(b[hdr:], data)
	return b
}

// The timestamp is found after other control messages, at their aligned length.
func TestParseAfterOtherMessages(t *testing.T) {
	ts := syscall.Timespec{Sec: 5, Nsec: 7}
	stamp := cmsg(syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS, unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)))
	other := cmsg(syscall.SOL_SOCKET, syscall.SCM_RIGHTS, []byte{1, 2, 3, 4}) // 4 bytes of data, padded to 8
	for _, c := range []struct {
		name string
		oob  []byte
		ns   int64
		ok   bool
	}{
		{"alone", stamp, 5e9 + 7, true},
		{"after another", append(append([]byte(nil), other...), stamp...), 5e9 + 7, true},
		{"after an empty one", append(cmsg(syscall.SOL_SOCKET, syscall.SCM_RIGHTS, nil), stamp...), 5e9 + 7, true},
		{"only another", other, 0, false},
		{"another level", cmsg(syscall.SOL_IP, syscall.SCM_TIMESTAMPNS, make([]byte, 16)), 0, false},
		{"short timestamp", cmsg(syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS, make([]byte, 15)), 0, false},
	} {
		if ns, ok := Parse(c.oob); ns != c.ns || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, ns, ok, c.ns, c.ok)
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, oob := range [][]byte{nil, {1, 2, 3}, make([]byte, 16), {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0, 35, 0, 0, 0}} {
		if _, ok := Parse(oob); ok {
			t.Fatalf("parsed a timestamp from %v", oob)
		}
	}
}

// tcpPair is a loopback connection: the peer's end and the accepted end, closed when the
// test ends. With stamp, the listener asks for receive stamps before the peer dials.
func tcpPair(t *testing.T, stamp bool) (peer, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if stamp {
		EnableListener(ln)
	}
	peer, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	accepted, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accepted.Close() })
	return peer, accepted
}

// A read returns the data with the kernel's stamp of its arrival, which falls inside the
// peer's write and not at the later read; the peer's close is n = 0 with no error.
func TestReadStamped(t *testing.T) {
	peer, ac := tcpPair(t, true)
	c := Enable(ac)
	if c == nil {
		t.Fatal("Enable refused a TCP connection")
	}
	// The kernel turns stamping on a moment after the first socket asks: write until a
	// read comes back stamped.
	buf := make([]byte, 8)
	var ns int64
	var before, after time.Time
	for i := 0; ns == 0; i++ {
		if i == 200 {
			t.Fatal("the kernel stamped none of 200 writes")
		}
		before = time.Now()
		if _, err := peer.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		after = time.Now()
		time.Sleep(20 * time.Millisecond) // the read comes well after the arrival
		n, stamp, err := c.ReadStamped(buf)
		ns = stamp
		if n != 1 || err != nil || buf[0] != 'x' {
			t.Fatalf("read %d %q, %v", n, buf[:n], err)
		}
	}
	if got := time.Unix(0, ns); got.Before(before.Add(-time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
		t.Fatalf("stamp %v outside the write [%v, %v]", got, before, after)
	}
	peer.Close()
	if n, ns, err := c.ReadStamped(buf); n != 0 || ns != 0 || err != nil {
		t.Fatalf("read after the peer closed: %d, %d, %v; want 0, 0, nil", n, ns, err)
	}
}

// A reset is a *net.OpError wrapping ECONNRESET, with no data and no stamp.
func TestReadStampedReset(t *testing.T) {
	peer, ac := tcpPair(t, false)
	c := Enable(ac)
	if c == nil {
		t.Fatal("Enable refused a TCP connection")
	}
	peer.(*net.TCPConn).SetLinger(0) // Close sends RST
	peer.Close()
	time.Sleep(10 * time.Millisecond)
	n, ns, err := c.ReadStamped(make([]byte, 4))
	var op *net.OpError
	if n != 0 || ns != 0 || !errors.As(err, &op) || op.Op != "read" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after a reset: %d, %d, %v; want a read *net.OpError with ECONNRESET", n, ns, err)
	}
}

// Only TCP connections are stamped; a closed one is refused.
func TestEnableRefuses(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Enable(a) != nil {
		t.Fatal("Enable accepted a net.Pipe connection")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if Enable(c) != nil {
		t.Fatal("Enable accepted a closed connection")
	}
}

// A listener with stamping on passes it to the connections it accepts, before Enable.
func TestEnableListenerIsInherited(t *testing.T) {
	for _, on := range []bool{false, true} {
		_, ac := tcpPair(t, on)
		raw, err := ac.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got int
		var gerr error
		if err := raw.Control(func(fd uintptr) {
			got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS)
		}); err != nil || gerr != nil {
			t.Fatal(err, gerr)
		}
		if want := map[bool]int{false: 0, true: 1}[on]; got != want {
			t.Errorf("listener stamping %v: accepted socket's SO_TIMESTAMPNS = %d, want %d", on, got, want)
		}
	}
	EnableListener(nil) // not TCP: nothing to do, no panic
}

// Stamping cannot be set on a socket that is gone.
func TestSetStampingClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := setStamping(raw); err == nil {
		t.Fatal("setStamping on a closed socket: no error")
	}
}

package backends

import (
	"context"
	"net"
	"testing"
	"time"
)

// A client that reads late still learns when the bytes arrived: the kernel's receive
// timestamp, not the moment the read returned.
func TestReceiveTimestampIgnoresReaderLag(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type span struct{ before, after time.Time }
	written := make(chan span, 2)
	done := make(chan struct{})
	defer close(done)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		// Keep the connection open until the client is done: a FIN queued behind the
		// data would be the newest packet, and its stamp the one reported.
		defer c.Close()
		for _, msg := range []string{"first", "second"} {
			before := time.Now()
			c.Write([]byte(msg))
			written <- span{before, time.Now()}
			time.Sleep(20 * time.Millisecond)
		}
		<-done
	}()

	d := &rxDialer{}
	c, err := d.DialContext(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rx := rxSource(c)
	if rx == nil {
		t.Fatal("the dialer did not enable receive timestamps")
	}
	buf := make([]byte, 64)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	<-written
	secondWritten := <-written
	// The reader is busy for a while after "second" arrived.
	time.Sleep(60 * time.Millisecond)
	n, err := c.Read(buf)
	readAt := time.Now()
	if err != nil || string(buf[:n]) != "second" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	got, ok := rx.RxTime()
	if !ok {
		t.Fatal("no receive timestamp")
	}
	// Loopback delivers within the writer's syscall: the stamp falls inside the write,
	// and the reader's 60 ms of lag are not in it.
	if got.Before(secondWritten.before.Add(-time.Millisecond)) || got.After(secondWritten.after.Add(time.Millisecond)) {
		t.Fatalf("stamp %v outside the write [%v, %v]", got, secondWritten.before, secondWritten.after)
	}
	if behind := readAt.Sub(got); behind < 50*time.Millisecond {
		t.Fatalf("the stamp is only %v before the read returned; it should exclude the reader's 60ms lag", behind)
	}
}

package ledger

import (
	"errors"
	"syscall"
	"testing"
)

// Close returns the error of the flush it does, not the later sync's or close's nil:
// on a full disk (/dev/full), the caller learns the last records were lost.
func TestRequestLogCloseReportsTheFailedFlush(t *testing.T) {
	l, err := OpenRequestLog("/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(RequestRecord{CellID: "c"}); err != nil {
		t.Fatal(err) // still buffered
	}
	if err := l.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close on a full device: %v, want ENOSPC", err)
	}
}

//go:build linux

package executor

import (
	"syscall"
	"time"
)

// nanosleep blocks the calling thread for d: precise to tens of microseconds, where a
// runtime timer on a quiet process may fire up to a millisecond late.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

//go:build linux

package mockserver

import (
	"syscall"
	"time"
)

// nanosleep blocks the calling thread for d: precise to tens of microseconds, unlike a
// runtime timer on an idle process.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

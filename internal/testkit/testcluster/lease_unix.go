//go:build unix

package testcluster

import (
	"os"
	"syscall"
)

// lockShared takes a shared lock on the lease file, held until the process ends.
func lockShared(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }

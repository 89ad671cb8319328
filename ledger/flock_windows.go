package ledger

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock on f, waiting for it, as flock does on Unix. Windows
// locks are mandatory on the bytes they cover, so the lock covers one byte far past any
// ledger's end: it serializes appending planruns without blocking readers. Windows drops
// it when the process dies.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, lockSpot())
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockSpot())
}

// lockSpot is the locked byte's offset, 2^62.
func lockSpot() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: 1 << 30} }

//go:build unix

package ledger

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on f, waiting for it; every planrun
// appending to the file takes it around each write, so concurrent runs append whole
// records. The kernel drops it when the process dies, so a killed run never holds it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

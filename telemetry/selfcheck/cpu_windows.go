package selfcheck

import (
	"syscall"
	"time"
)

// processCPU is the user and kernel CPU time this process has used.
func processCPU() time.Duration {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0
	}
	var created, exited, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	return span(kernel) + span(user)
}

// span is a FILETIME read as a duration (100 ns units), not as a date.
func span(f syscall.Filetime) time.Duration {
	return time.Duration(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) * 100
}

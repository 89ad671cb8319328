//go:build windows

package apply

import "syscall"

// processGone reports whether no process has this pid: OpenProcess refuses a pid no process
// has (ERROR_INVALID_PARAMETER), and one that exited but is still open reports an exit code.
func processGone(pid int) bool {
	const stillActive = 259 // STILL_ACTIVE
	h, err := syscall.OpenProcess(syscall.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return err == syscall.Errno(87) // ERROR_INVALID_PARAMETER
	}
	defer syscall.CloseHandle(h)
	var code uint32
	return syscall.GetExitCodeProcess(h, &code) == nil && code != stillActive
}

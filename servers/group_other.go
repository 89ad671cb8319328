//go:build unix && !linux

package servers

import "syscall"

// becomeSubreaper is Linux only; elsewhere orphans go to init.
func becomeSubreaper() {}

// reapGroup collects the exited members of process group pgid that are planrun's
// children. Only call it after the group leader has been waited for.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}

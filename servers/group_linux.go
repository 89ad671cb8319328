package servers

import (
	"sync"
	"syscall"
)

var subreaperOnce sync.Once

// becomeSubreaper makes orphaned descendants of planrun its own children, so reapGroup
// can collect them instead of leaving zombies under an init that does not reap.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// reapGroup collects the exited members of process group pgid that became planrun's
// children. Only call it after the group leader has been waited for: it must not steal
// the leader's status from exec.Cmd.Wait.
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

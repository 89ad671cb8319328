package procgroup

import "syscall"

// setDeathSignal has the kernel SIGKILL the leader when its forking thread exits.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

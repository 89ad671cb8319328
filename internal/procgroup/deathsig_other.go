//go:build unix && !linux

package procgroup

import "syscall"

// setDeathSignal: Pdeathsig is Linux only; elsewhere the watchdog alone kills the group.
func setDeathSignal(*syscall.SysProcAttr) {}

//go:build linux

package procmem

import (
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A process tree whose processes are pinned apart (vLLM's engine core and API server)
// ran on the union of their cores; a process that has ended is left out.
func TestGroupCPUsAllowed(t *testing.T) {
	if got := formatCPUList([]int{0, 1, 2, 5, 7, 8}); got != "0-2,5,7-8" {
		t.Errorf("formatCPUList: %q", got)
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one core: two processes cannot be pinned apart")
	}
	var pids []int
	for _, core := range []int{0, 1} {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var set unix.CPUSet
		set.Set(core)
		if err := unix.SchedSetaffinity(cmd.Process.Pid, &set); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, cmd.Process.Pid)
	}
	for i, want := range []string{"0", "1"} {
		if got, err := GroupCPUsAllowed(pids[i : i+1]); got != want || err != nil {
			t.Errorf("process %d: %q %v, want %q", i, got, err, want)
		}
	}
	if got, err := GroupCPUsAllowed(append(pids, 1<<30)); got != "0-1" || err != nil {
		t.Errorf("both, and an ended process: %q %v, want 0-1", got, err)
	}
	if _, err := GroupCPUsAllowed([]int{1 << 30}); err == nil {
		t.Error("no process read, and no error")
	}
}

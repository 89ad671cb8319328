package procgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func allowedList(t *testing.T, statusPath string) string {
	t.Helper()
	b, err := os.ReadFile(statusPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s has no Cpus_allowed_list", statusPath)
	return ""
}

// TestStartOnPinsTheGroup: the leader and a child it forks later are allowed only the
// CPU given, and no thread of this process keeps the restriction.
func TestStartOnPinsTheGroup(t *testing.T) {
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil || mine.Count() < 2 {
		t.Skipf("needs two CPUs to tell a restriction from none (have %d)", mine.Count())
	}
	last := -1
	for c := 0; c < 1024; c++ {
		if mine.IsSet(c) {
			last = c
		}
	}
	cmd := exec.Command("/bin/sh", "-c", `sleep 30 & echo $! ; wait`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g, err := StartOn(cmd, []int{last})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-g.PGID(), syscall.SIGKILL); cmd.Wait(); g.Release() }()
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child := strings.TrimSpace(string(buf[:n]))
	want := strconv.Itoa(last)
	if got := allowedList(t, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status"); got != want {
		t.Errorf("leader allowed %q, want %q", got, want)
	}
	if got := allowedList(t, "/proc/"+child+"/status"); got != want {
		t.Errorf("the leader's child allowed %q, want %q", got, want)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, st := range tasks {
		if got := allowedList(t, st); got == want {
			t.Errorf("thread %s of this process kept the server's CPU set %q", st, got)
		}
	}
}

package ledger

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// CollectHost reads the CPU model from /proc/cpuinfo and the kernel
// release from /proc/sys/kernel/osrelease.
func TestCollectHostReadsProc(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	h := CollectHost()
	if want := cpuModel(bytes.NewReader(info)); h.CPU != want {
		t.Errorf("CPU = %q, want %q from /proc/cpuinfo", h.CPU, want)
	}
	if want := strings.TrimSpace(string(release)); want == "" || h.Kernel != want {
		t.Errorf("Kernel = %q, want %q from /proc/sys/kernel/osrelease", h.Kernel, want)
	}
}

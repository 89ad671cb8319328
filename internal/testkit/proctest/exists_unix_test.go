//go:build unix

package proctest

import (
	"os"
	"os/exec"
	"testing"
)

// This process exists; a child that exited and was reaped does not.
func TestExists(t *testing.T) {
	if !Exists(os.Getpid()) {
		t.Fatal("Exists(own pid) = false")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Exists(cmd.Process.Pid) {
		t.Errorf("Exists(%d) = true for a reaped child", cmd.Process.Pid)
	}
}

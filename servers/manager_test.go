package servers

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestManagerReuseSwitchClose(t *testing.T) {
	ctx := withTimeout(t)
	dir := t.TempDir()
	specA, opts := serverSpec(t, "a", "-child", "-pidfile="+filepath.Join(dir, "a"))
	specB, optsB := serverSpec(t, "b", "-child", "-pidfile="+filepath.Join(dir, "b"))
	// One Manager, one Options: both servers read their port from the spec instead.
	specB.Env["PLANRUN_PORT"] = optsB.Env["PLANRUN_PORT"]
	mgr := NewManager(opts)
	defer mgr.Close()

	a1, err := mgr.Acquire(ctx, specA)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := mgr.Acquire(ctx, specA)
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Fatal("Acquire of the same name started a second server")
	}
	aLeader, aChild := readPids(t, filepath.Join(dir, "a"))

	b, err := mgr.Acquire(ctx, specB)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-a1.Exited():
	default:
		t.Fatal("switching to b left a running")
	}
	assertGone(t, "server a", aLeader)
	assertGone(t, "server a's child", aChild)
	if mgr.Current() != b {
		t.Error("Current is not b")
	}
	bLeader, bChild := readPids(t, filepath.Join(dir, "b"))

	if err := mgr.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, "server b", bLeader)
	assertGone(t, "server b's child", bChild)
	if _, err := mgr.Acquire(ctx, specA); !errors.Is(err, ErrClosed) {
		t.Errorf("Acquire after Close = %v, want ErrClosed", err)
	}
	if err := mgr.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestManagerRestartsDeadServer(t *testing.T) {
	ctx := withTimeout(t)
	spec, opts := serverSpec(t, "a", "-crash-after=300ms")
	mgr := NewManager(opts)
	defer mgr.Close()
	p1, err := mgr.Acquire(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	<-p1.Exited()
	p2, err := mgr.Acquire(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if p2 == p1 || p2.PID() == p1.PID() {
		t.Fatal("Acquire reused a dead server")
	}
	if p2.Err() != nil {
		t.Errorf("fresh server has Err %v", p2.Err())
	}
}

// Close from another goroutine (the signal path) while Acquire waits for readiness.
func TestManagerCloseDuringAcquire(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	spec, opts := serverSpec(t, "slow", "-delay=1h", "-child", "-pidfile="+pidfile)
	mgr := NewManager(opts)
	done := make(chan error, 1)
	go func() {
		_, err := mgr.Acquire(withTimeout(t), spec)
		done <- err
	}()
	leader, child := readPids(t, pidfile)
	if err := mgr.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned: the start in flight must be over and its processes gone. Close
	// waits on the lock Acquire holds until it returns; the goroutine's send comes after
	// that unlock, so a non-blocking receive here raced with it (it failed once in a
	// fresh CI run). The processes are checked before waiting for the send.
	assertGone(t, "server", leader)
	assertGone(t, "server's child", child)
	if mgr.acquire.TryLock() {
		mgr.acquire.Unlock()
	} else {
		t.Fatal("Close returned while an Acquire still held the start lock")
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Acquire = %v, want ErrClosed", err)
	}
}

// The Ctrl-C path end to end: a process running a Manager (as planrun does) gets SIGINT,
// and afterwards no process of the server's group is left, whether the server was ready
// or still starting.
func TestInterruptLeavesNoProcess(t *testing.T) {
	tests := []struct {
		name string
		args []string
		wait string // the manager's output that says it is at the point to interrupt
		exit int    // the manager's exit code: 1 when the interrupt made Acquire fail
	}{
		{"server ready", []string{"-child"}, "acquired", 0},
		{"server starting", []string{"-child", "-delay=1h"}, "", 1},
		{"server ignores SIGTERM", []string{"-child", "-ignore-term"}, "acquired", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "pids")
			mgr, out := startManagerHelper(t, Spec{
				Name:    "srv",
				Command: helperCommand(t, append(tt.args, "-pidfile="+pidfile)...),
				Env:     map[string]string{helperEnv: "serve"},
				Grace:   2 * time.Second, // a loaded machine's helper still answers its signal in time
			})
			leader, child := readPids(t, pidfile)
			if tt.wait != "" {
				waitFor(t, "manager output "+tt.wait, func() bool { return strings.Contains(out.String(), tt.wait) })
			}
			if err := mgr.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, mgr); code != tt.exit {
				t.Errorf("manager exit code %d, want %d", code, tt.exit)
			}
			assertGone(t, "server", leader)
			assertGone(t, "server's child", child)
			if t.Failed() {
				t.Logf("manager output:\n%s", out)
			}
		})
	}
}

// startManagerHelper runs this test binary as a planrun-like process that acquires spec.
func startManagerHelper(t *testing.T, spec Spec) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helperCommand(t)[0])
	cmd.Env = append(os.Environ(), helperEnv+"=manager", specEnv+"="+string(js))
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, out
}

// waitExit waits for a helper process and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(hangGuard):
		t.Fatal("helper did not exit")
		return -1
	}
}

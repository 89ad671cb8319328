package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
)

// helperEnv makes the test binary a process that starts a group through Start, prints
// "ready", and waits to be killed; with "release" it releases the guard first.
const helperEnv = "PROCGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helper(mode, os.Args[len(os.Args)-1])
		return
	}
	os.Exit(m.Run())
}

// helper's group: a shell leader with two children of its own, so the leader's
// Pdeathsig alone would leave the children behind. Each mentions tag.
func helper(mode, tag string) {
	cmd := exec.Command("/bin/sh", "-c", `sleep 300 & sleep 300 & wait`, tag)
	cmd.Env = append(os.Environ(), "PROCGROUP_TAG="+tag)
	g, err := Start(cmd)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	if mode == "release" {
		g.Release()
	}
	fmt.Println("ready", g.PGID())
	// Not select{}: once the released watchdog is reaped nothing else runs, and the
	// runtime would end the helper for a deadlock.
	time.Sleep(time.Hour)
}

// startHelper runs the helper and waits until it and its group's three processes run.
func startHelper(t *testing.T, mode string) (*exec.Cmd, string, int) {
	tag := fmt.Sprintf("procgroup-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(os.Args[0], "-test.run=^$", tag)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for _, pid := range proctest.Mentioning(tag) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 || f[0] != "ready" {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	pgid, _ := strconv.Atoi(f[1])
	waitFor(t, "the helper and its group's three processes", func() bool { return len(proctest.Mentioning(tag)) == 4 })
	return cmd, tag, pgid
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// SIGKILL of the process that called Start takes the whole group with it: the leader
// and the leader's own children.
func TestGroupDiesWithStarter(t *testing.T) {
	cmd, tag, _ := startHelper(t, "hold")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitFor(t, "no process of the group left", func() bool { return len(proctest.Mentioning(tag)) == 0 })
}

// After Release the watchdog no longer acts: only the leader dies (Pdeathsig), its
// children live on. This is what the watchdog adds to Pdeathsig.
func TestReleaseDisarms(t *testing.T) {
	cmd, tag, pgid := startHelper(t, "release")
	cmd.Process.Kill()
	cmd.Wait()
	waitFor(t, "the leader to die by Pdeathsig", func() bool {
		for _, pid := range proctest.Mentioning(tag) {
			if pid == pgid {
				return false
			}
		}
		return true
	})
	time.Sleep(500 * time.Millisecond) // a watchdog that still acted would have by now
	if left := proctest.Mentioning(tag); len(left) != 2 {
		t.Fatalf("after Release and the starter's death, %d processes left (%v), want the leader's 2 children", len(left), left)
	}
}

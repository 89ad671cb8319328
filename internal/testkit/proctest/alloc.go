package proctest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// AllocBytes is what an allocator child allocates once told to: large beside the Go
// runtime's own few MB, so 5% of it is a real bound on a memory figure.
const AllocBytes = 96 << 20

// allocEnv makes the test binary the allocator child.
const allocEnv = "PLANRUN_PROCTEST_ALLOCATOR"

// AllocatorMain is the allocator child's body: a package whose tests use StartAllocator
// calls it first in TestMain and returns when it says true. The child says "ready",
// waits for a line, allocates AllocBytes and touches every page so it is resident, says
// "done", and holds the memory until stdin closes.
func AllocatorMain() bool {
	if os.Getenv(allocEnv) != "1" {
		return false
	}
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(1)
	}
	held := make([]byte, AllocBytes)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	fmt.Println("done")
	io.Copy(io.Discard, in)
	runtime.KeepAlive(held)
	return true
}

// Allocator is a child process that allocates AllocBytes when told.
type Allocator struct {
	Cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// StartAllocator starts the test binary as the allocator child and waits until it is
// ready; the test's cleanup ends it. With wrap, the child runs under that command
// instead (e.g. "sh", "-c", `"$1" -test.run='^$'; :`, "marker"), which gets the test
// binary as its last argument: a parent whose command line a test can match, with the
// allocator below it.
func StartAllocator(t testing.TB, wrap ...string) *Allocator {
	t.Helper()
	argv := []string{os.Args[0], "-test.run=^$"}
	if len(wrap) > 0 {
		argv = append(append([]string(nil), wrap...), os.Args[0])
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), allocEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &Allocator{Cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	a.expect(t, "ready")
	return a
}

// Allocate tells the child to allocate and waits until its memory is resident.
func (a *Allocator) Allocate(t testing.TB) {
	t.Helper()
	fmt.Fprintln(a.stdin, "go")
	a.expect(t, "done")
}

func (a *Allocator) expect(t testing.TB, want string) {
	t.Helper()
	line, err := a.out.ReadString('\n')
	if err != nil || line != want+"\n" {
		t.Fatalf("allocator child said %q (%v), want %q", line, err, want)
	}
}

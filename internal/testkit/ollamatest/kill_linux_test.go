package ollamatest

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
)

// killHelperEnv makes the test binary a test that starts a server under the named
// directory, loads the model (a runner starts), says "ready" and waits to be killed.
const killHelperEnv = "OLLAMATEST_KILL_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(killHelperEnv); dir != "" {
		os.Exit(killHelper(dir))
	}
	os.Exit(m.Run())
}

func killHelper(dir string) int {
	s, err := StartServer(dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	resp, err := http.Post(s.URL+"/api/generate", "application/json",
		strings.NewReader(`{"model":"tiny","prompt":"hello","stream":false,"options":{"num_predict":2}}`))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	resp.Body.Close()
	fmt.Println("ready")
	time.Sleep(time.Hour) // until killed
	return 0
}

// A test binary SIGKILLed mid-run (as `go test -timeout` or a mutation tool's timeout
// does) runs no cleanup: its Ollama, serve and the runner serve forked, must die anyway.
// The processes are found by the server's unique directory, not by name, so other
// Ollamas on the machine do not count.
func TestKilledTestLeavesNoServer(t *testing.T) {
	Require(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+dir)
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
		for _, pid := range proctest.Mentioning(dir) {
			syscall.Kill(pid, syscall.SIGKILL) // what the mechanism failed to kill
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("helper: %q %v", line, err)
	}
	var serve, runner bool
	for _, pid := range proctest.Mentioning(dir) {
		d := proctest.Describe(pid)
		serve = serve || strings.HasSuffix(d, " serve")
		runner = runner || strings.Contains(d, " runner ")
	}
	if !serve || !runner {
		t.Fatalf("before the kill, processes of %s: %v; want ollama serve and ollama runner", dir, describe(proctest.Mentioning(dir)))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for left := proctest.Mentioning(dir); len(left) > 0; left = proctest.Mentioning(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("20s after the test binary's SIGKILL, still running: %v", describe(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describe(pids []int) []string {
	var ds []string
	for _, pid := range pids {
		ds = append(ds, proctest.Describe(pid))
	}
	return ds
}

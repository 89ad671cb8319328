package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
)

// The tests run small real processes: this test binary, re-executed with helperEnv set,
// plays a server (and its child), a setup command, or a planrun running a Manager.
const (
	helperEnv = "PLANRUN_SERVERS_HELPER"
	specEnv   = "PLANRUN_SERVERS_SPEC" // the Spec a "manager" helper acquires, as JSON
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func runHelper(mode string, args []string) int {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	delay := fs.Duration("delay", 0, "serve /health only after this delay")
	child := fs.Bool("child", false, "spawn a child process in the same process group")
	pidfile := fs.String("pidfile", "", "write 'leader child' pids here")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM (the child too)")
	crashAfter := fs.Duration("crash-after", 0, "exit 7 after this long")
	exitCode := fs.Int("exit", -1, "print the lines, then exit with this code at once")
	lines := fs.Int("lines", 0, "print this many numbered lines first")
	get := fs.String("get", "", "setup: GET this URL first; fail unless 2xx")
	write := fs.String("write", "", "setup: write $HELPER_GREETING here")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	for i := 1; i <= *lines; i++ {
		fmt.Printf("line %d\n", i)
	}
	switch mode {
	case "sleep":
		time.Sleep(time.Hour)
		return 0
	case "setup":
		return helperSetup(*get, *write, *exitCode)
	case "manager":
		return helperManager()
	}
	// mode "serve"
	fmt.Printf("greeting=%s\n", os.Getenv("HELPER_GREETING"))
	if wd, err := os.Getwd(); err == nil {
		fmt.Printf("cwd=%s\n", wd)
	}
	if *exitCode >= 0 {
		return *exitCode
	}
	childPid := 0
	if *child {
		self, _ := os.Executable()
		cargs := []string{}
		if *ignoreTerm {
			cargs = append(cargs, "-ignore-term")
		}
		c := exec.Command(self, cargs...)
		c.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := c.Start(); err != nil {
			fmt.Println("child:", err)
			return 1
		}
		childPid = c.Process.Pid
	}
	if *pidfile != "" {
		tmp := *pidfile + ".tmp"
		os.WriteFile(tmp, fmt.Appendf(nil, "%d %d\n", os.Getpid(), childPid), 0o644)
		os.Rename(tmp, *pidfile)
	}
	if *crashAfter > 0 {
		time.AfterFunc(*crashAfter, func() { fmt.Println("crashing"); os.Exit(7) })
	}
	time.Sleep(*delay)
	fmt.Println("serving")
	http.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	http.HandleFunc("/crash", func(w http.ResponseWriter, r *http.Request) { fmt.Println("crashing"); os.Exit(7) })
	err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PLANRUN_PORT"), nil)
	fmt.Println(err)
	return 1
}

func helperSetup(get, write string, code int) int {
	if get != "" {
		resp, err := http.Get(get)
		if err != nil || resp.StatusCode/100 != 2 {
			fmt.Println("setup: server not ready:", err)
			return 1
		}
		resp.Body.Close()
		fmt.Println("setup: server answered")
	}
	if write != "" {
		if err := os.WriteFile(write, []byte(os.Getenv("HELPER_GREETING")), 0o644); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	if code > 0 {
		fmt.Println("boom")
		return code
	}
	return 0
}

// helperManager is planrun in miniature: a Manager, closed deferred and on Ctrl-C.
func helperManager() int {
	var spec Spec
	if err := json.Unmarshal([]byte(os.Getenv(specEnv)), &spec); err != nil {
		fmt.Println(err)
		return 2
	}
	port, _ := FreePort()
	mgr := NewManager(Options{Env: map[string]string{"PLANRUN_PORT": strconv.Itoa(port)}, PollInterval: 20 * time.Millisecond})
	defer mgr.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	spec.ReadyURL = fmt.Sprintf("http://127.0.0.1:%d/health", port)
	if _, err := mgr.Acquire(ctx, spec); err != nil {
		fmt.Println("acquire:", err)
		return 1
	}
	fmt.Println("acquired")
	<-ctx.Done()
	return 0
}

// helperCommand is the argv that runs this test binary as a helper with args.
func helperCommand(t testing.TB, args ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{self}, args...)
}

// serverSpec is a spec for the "serve" helper on a fresh port, with its Options.
func serverSpec(t testing.TB, name string, args ...string) (Spec, Options) {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{
		Name:         name,
		Command:      helperCommand(t, args...),
		Env:          map[string]string{helperEnv: "serve"},
		ReadyURL:     fmt.Sprintf("http://127.0.0.1:%d/health", port),
		ReadyTimeout: time.Minute,
		Grace:        5 * time.Second,
	}
	opts := Options{Env: map[string]string{"PLANRUN_PORT": strconv.Itoa(port)}, PollInterval: 20 * time.Millisecond}
	return spec, opts
}

// hangGuard only keeps a broken test from hanging; no test asserts on wall time.
const hangGuard = 30 * time.Second

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %s", what, hangGuard)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readPids waits for the helper's pidfile: the leader's pid and its child's (0 if none).
func readPids(t *testing.T, path string) (leader, child int) {
	t.Helper()
	waitFor(t, "pidfile "+path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(string(b), &leader, &child); err != nil {
		t.Fatalf("pidfile %q: %v", b, err)
	}
	return leader, child
}

func assertGone(t *testing.T, what string, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Fatalf("%s: no pid recorded", what)
	}
	if proctest.Exists(pid) {
		t.Errorf("%s (pid %d) is still there: %s", what, pid, procState(pid))
	}
}

// procState is the state letter of /proc/<pid>/stat ("Z" for a zombie), or "" if gone.
func procState(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}

func withTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// lockedBuffer collects a helper's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

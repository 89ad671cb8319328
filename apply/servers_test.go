package apply

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// serveMockChild runs the mock server as a real process that a plan's server block
// starts: it writes its PID to PLANRUN_TEST_PIDFILE and, with PLANRUN_TEST_DIE_AFTER=n,
// exits abruptly when generation request n+1 arrives (a server crashing mid-cell). With
// PLANRUN_TEST_ALLOC=1, a POST to /test/alloc makes it allocate proctest.AllocBytes and
// hold them resident (a model loaded while the window runs). With PLANRUN_TEST_ENGINE_LOG,
// it first writes that file (a recorded engine start-up log) to stderr, into its log.
func serveMockChild(addr string) {
	if f := os.Getenv("PLANRUN_TEST_PIDFILE"); f != "" {
		os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if f := os.Getenv("PLANRUN_TEST_ENGINE_LOG"); f != "" {
		b, _ := os.ReadFile(f)
		os.Stderr.Write(b)
	}
	dieAfter, _ := strconv.Atoi(os.Getenv("PLANRUN_TEST_DIE_AFTER"))
	cfg := mockserver.Config{TTFT: 2 * time.Millisecond, TPOT: time.Millisecond, RecordTruth: os.Getenv("PLANRUN_TEST_MOCK_TRUTH") != ""}
	if d, err := time.ParseDuration(os.Getenv("PLANRUN_TEST_MOCK_TTFT")); err == nil {
		cfg.TTFT = d
	}
	if d, err := time.ParseDuration(os.Getenv("PLANRUN_TEST_MOCK_TPOT")); err == nil {
		cfg.TPOT = d
	}
	if d, err := time.ParseDuration(os.Getenv("PLANRUN_TEST_MOCK_JITTER")); err == nil {
		cfg.Jitter, cfg.Seed = d, 3
	}
	arrivals := arrivalLog(os.Getenv("PLANRUN_TEST_ARRIVALS"))
	if arrivals != nil {
		cfg = mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 2 * time.Millisecond}
	}
	mock := mockserver.New(cfg)
	var n atomic.Int64
	var held []byte
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		if r.URL.Path == "/test/alloc" && os.Getenv("PLANRUN_TEST_ALLOC") == "1" {
			held = make([]byte, proctest.AllocBytes)
			for i := 0; i < len(held); i += 4096 {
				held[i] = 1
			}
			return
		}
		if r.Method == http.MethodPost && dieAfter > 0 && n.Add(1) > int64(dieAfter) {
			os.Exit(3)
		}
		if arrivals != nil && strings.HasSuffix(r.URL.Path, "/completions") {
			r.Header.Set("X-Request-Id", arrivals(at)) // the mock echoes it to the client
		}
		mock.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if cfg.RecordTruth {
		mock.Serve(l) // the mock's own listener: kernel arrival stamps, /mock/truth
		select {}
	}
	http.Serve(l, h)
}

// arrivalLog, for a file name, names each request it is given the arrival of and
// writes "name unix-ns" to the file, a line per request (nil for no file): with
// PLANRUN_TEST_ARRIVALS, serveMockChild is a server that records when each request came.
func arrivalLog(path string) func(at time.Time) string {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	n := 0
	return func(at time.Time) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		id := fmt.Sprintf("arrival-%d", n)
		fmt.Fprintf(f, "%s %d\n", id, at.UnixNano())
		return id
	}
}

// serverPlan is a plan whose two cells each need their own plan-managed mock server.
func serverPlan(t *testing.T, dieAfter int) (src string, pidFiles [2]string) {
	t.Helper()
	dir := t.TempDir()
	var blocks []string
	for i, name := range []string{"first", "second"} {
		port, err := servers.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		pidFiles[i] = filepath.Join(dir, name+".pid")
		die := 0
		if i == 0 {
			die = dieAfter
		}
		blocks = append(blocks, fmt.Sprintf(`
server %q {
  command = [%q, "-test.run=^$"]
  env = {
    PLANRUN_TEST_MOCK_SERVER = "127.0.0.1:%d"
    PLANRUN_TEST_PIDFILE     = %q
    PLANRUN_TEST_DIE_AFTER   = "%d"
  }
  ready {
    url     = "http://127.0.0.1:%d/health"
    timeout = "20s"
  }
  grace = "2s"
}
backend "openai" %q {
  url    = "http://127.0.0.1:%d/v1"
  server = server.%s
}`, name, os.Args[0], port, pidFiles[i], die, port, name, port, name))
	}
	src = strings.Join(blocks, "\n") + `
variable "url" { default = "" }
workload "w" {
  prompt      = "a fixed prompt: one calibration request"
  max_tokens  = 4
  concurrency = 1
  requests    = 10
  warmup_runs = 0
  repeat_runs = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.first, backend.openai.second]
  workload = [workload.w]
}
`
	return src, pidFiles
}

func gone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the server never wrote its PID: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	if proctest.Exists(pid) {
		t.Fatalf("server process %d is still there after apply", pid)
	}
}

func TestServerDyingMidCellFailsTheRestAndTheRunGoesOn(t *testing.T) {
	// The first server answers the probe's usage check, the calibration request and 3
	// measured ones, then dies.
	src, pids := serverPlan(t, 1+1+3)
	p, cells := loadPlan(t, src, "")
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("rows = %d", len(res.Rows))
	}
	first, second := res.Rows[0], res.Rows[1]
	if first.Succeeded != 3 || first.Failed != 7 || first.Failures["server_died"] < 5 {
		t.Fatalf("first cell: %d ok, failures %v; want 3 ok and the rest failed, most as server_died", first.Succeeded, first.Failures)
	}
	if second.Status != ledger.StatusOK || second.Succeeded != 10 {
		t.Fatalf("the run must go on with the next server: %s, %d ok", second.Status, second.Succeeded)
	}
	// The run directory says how each server was started, and what version it was.
	m := readManifest(t, res.RunDir)
	for _, name := range []string{"first", "second"} {
		s := m.Servers[name]
		if strings.Join(s.Command, " ") != os.Args[0]+" -test.run=^$" || s.Version == "" ||
			strings.Join(s.EnvNames, ",") != "PLANRUN_TEST_DIE_AFTER,PLANRUN_TEST_MOCK_SERVER,PLANRUN_TEST_PIDFILE" {
			t.Fatalf("server %s in the manifest: %+v", name, s)
		}
	}
	gone(t, pids[0])
	gone(t, pids[1])
}

func TestInterruptStopsPlanManagedServers(t *testing.T) {
	src, pids := serverPlan(t, 0)
	src = strings.Replace(src, "requests    = 10", "requests    = 100000", 1)
	p, cells := loadPlan(t, src, "")
	ctx, cancel := context.WithCancel(context.Background())
	prog := &countingProgress{}
	prog.onReq = func() {
		if prog.requests.Load() == 20 {
			cancel()
		}
	}
	res, err := Run(ctx, Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Progress: prog, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Rows[0].Status != ledger.StatusInterrupted || res.Rows[0].Succeeded < 20 {
		t.Fatalf("interrupted=%v rows=%+v", res.Interrupted, res.Rows)
	}
	gone(t, pids[0])
	if _, err := os.Stat(pids[1]); !os.IsNotExist(err) {
		t.Fatal("the second server was started after the interrupt")
	}
}

package apply

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem/exporter"
)

// remoteHost stands for another machine: a loopback address other than 127.0.0.1, which
// planrun takes for a remote host (no local NVML, no local process tree).
const remoteHost = "127.0.0.2"

const remoteMemoryPlan = `
variable "url" { type = string }
backend "openai" "remote" { url = var.url }
hardware "remote" {
  host = %q
  telemetry {
    process       = %q
    process_group = "mock"
  }
}
workload "w" {
  prompt      = "a fixed prompt"
  max_tokens  = 8
  concurrency = 1
  requests    = 6
  warmup_runs = 0
  repeat_runs = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.remote]
  hardware = [hardware.remote]
  workload = [workload.w]
}
`

// A cell on a remote host gets its server's memory from the process exporter on that
// host. The server is the mock in its own process on 127.0.0.2, the exporter serves over
// real TCP on the same address and finds the mock by its command line, and the mock
// allocates a known amount once the measured window runs: the row's peak − baseline is
// that amount within 5%, and its source names the exporter.
func TestRemoteHostMemoryThroughProcessExporter(t *testing.T) {
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("%s:%d", remoteHost, port)
	marker := "remote-mock-" + addr
	srv := exec.Command(os.Args[0], "-test.run=^$", marker)
	srv.Env = append(os.Environ(), "PLANRUN_TEST_MOCK_SERVER="+addr, "PLANRUN_TEST_ALLOC=1")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	waitHealthy(t, "http://"+addr+"/health")

	l, err := net.Listen("tcp", remoteHost+":0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", exporter.Handler([]exporter.Group{{Name: "mock", Match: regexp.MustCompile(regexp.QuoteMeta(marker))}}))
	exp := &http.Server{Handler: mux}
	go exp.Serve(l)
	t.Cleanup(func() { exp.Close() })
	exporterURL := "http://" + l.Addr().String() + "/metrics"

	p, cells := loadPlan(t, fmt.Sprintf(remoteMemoryPlan, remoteHost, exporterURL), "http://"+addr+"/v1")

	// The first measured request "loads the model": the window's baseline is before it.
	var once sync.Once
	progress := &countingProgress{onReq: func() {
		once.Do(func() {
			resp, err := http.Post("http://"+addr+"/test/alloc", "text/plain", nil)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(),
		ResultsDir: t.TempDir(), Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusOK {
		t.Fatalf("rows: %+v", res.Rows)
	}
	r := res.Rows[0]
	got := (r.MemPeakGB - r.MemBaselineGB) * 1e9
	t.Logf("through the exporter: baseline %.4f GB, peak %.4f GB: %.2f MiB for %d MiB allocated; %s",
		r.MemBaselineGB, r.MemPeakGB, got/(1<<20), proctest.AllocBytes>>20, r.MemSource)
	if rel := math.Abs(got-proctest.AllocBytes) / proctest.AllocBytes; rel > 0.05 || math.IsNaN(rel) {
		t.Errorf("peak − baseline = %.1f MiB, want %d MiB within 5%%", got/(1<<20), proctest.AllocBytes>>20)
	}
	wantSource := "process-exporter " + exporterURL + " group mock, RSS, 1 process"
	if !strings.HasPrefix(r.MemSource, wantSource) {
		t.Errorf("mem_source %q, want it to begin %q", r.MemSource, wantSource)
	}
	if gb, src, ok := r.MemoryGB(); !ok || gb != r.MemPeakGB || src != r.MemSource {
		t.Errorf("the table's memory: %v %q %v, want the exporter's peak", gb, src, ok)
	}
}

// waitHealthy waits until url answers 200.
func waitHealthy(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered: %v", url, err)
		}
	}
}

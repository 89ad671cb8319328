package apply

import (
	"context"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/planrun/planrun/apply/pins"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

const pinnedPlan = `
variable "url" { type = string }
server "s" {
  command = ["true"]
  env     = { KEEP = "1" }
}
backend "ollama" "managed" {
  url    = var.url
  server = server.s
}
backend "ollama" "plain" { url = var.url }
hardware "cpu0" { cpus = "0" }
hardware "far" { cpus = "4095" }
hardware "gpu" { gpus = [0] }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 1
}
matrix "managed" {
  model    = ["tiny"]
  tool     = [backend.ollama.managed]
  hardware = [hardware.cpu0]
  workload = [workload.w]
  model_id = "mock"
}
matrix "impossible" {
  model    = ["tiny"]
  tool     = [backend.ollama.managed]
  hardware = [hardware.far, hardware.gpu]
  workload = [workload.w]
  model_id = "mock"
}
`

func TestPinnedSpec(t *testing.T) {
	_, cells := loadPlan(t, pinnedPlan, "http://127.0.0.1:1")
	c := cells[0]
	spec := pins.Spec(c, c.Server.Spec)
	if spec.Name != "s@cpu0" || !reflect.DeepEqual(spec.CPUs, []int{0}) || spec.Env["VLLM_CPU_OMP_THREADS_BIND"] != "0" || spec.Env["KEEP"] != "1" {
		t.Errorf("pinned spec %+v", spec)
	}
	if _, ok := c.Server.Spec.Env["VLLM_CPU_OMP_THREADS_BIND"]; ok {
		t.Error("pinning changed the plan's own server block")
	}
	if n := pins.Threads(c); n != 1 {
		t.Errorf("num_thread %d, want 1 for one core", n)
	}
	cfg := pins.BackendConfig(c)
	if opts, _ := cfg.ExtraFields["options"].(map[string]any); opts["num_thread"] != 1 {
		t.Errorf("extra fields %v: want options.num_thread = 1", cfg.ExtraFields)
	}
	if got := pins.WithNumThread(map[string]any{"options": map[string]any{"num_thread": 8, "num_ctx": 512}}, 1); got["options"].(map[string]any)["num_thread"] != 8 {
		t.Errorf("a plan's own num_thread was overridden: %v", got)
	}
	if !strings.Contains(backendKey(c), "num_thread=1") {
		t.Errorf("backend key %q: a pinned cell needs its own client", backendKey(c))
	}
	gpuCell := cells[2]
	if s := pins.Spec(gpuCell, servers.Spec{Name: "x"}); s.Env["CUDA_VISIBLE_DEVICES"] != "0" || s.Name != "s@gpu" {
		t.Errorf("gpu pin: %+v", s)
	}
}

// TestUnsatisfiablePinsSendNothing: a core this machine lacks and a GPU NVML does not
// see each fail their cell before any request. (Pins on a cell without a server block
// are the plan's to refuse: TestPlanChecksRefuseBeforeStarting.)
func TestUnsatisfiablePinsSendNothing(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, pinnedPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells[1:], NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Errorf("%d generation requests reached the server", n)
	}
	want := []string{"names CPU 4095", "no GPU telemetry"}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for i, r := range res.Rows {
		if r.Status != ledger.StatusFailed || !strings.Contains(r.Notes, want[i]) || !strings.Contains(r.Notes, "plan.hcl:") {
			t.Errorf("row %d: %s %s, want failed with %q and the plan's line", i, r.Status, r.Notes, want[i])
		}
	}
}

// TestPlanChecksRefuseBeforeStarting: apply runs the plan's own checks over the cells
// it is given, so a cell the plan refuses (here pins moved onto a cell without a
// server, as a caller building cells by hand might) starts nothing and sends nothing.
func TestPlanChecksRefuseBeforeStarting(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, pinnedPlan, srv.URL)
	c := *cells[0]
	c.Server = nil
	c.Backend = p.Backends[1] // ollama.plain: no server block
	res, err := Run(context.Background(), Options{Plan: p, Cells: []*plan.Cell{&c}, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err == nil || !strings.Contains(err.Error(), "Pins without a server") || !strings.Contains(err.Error(), "plan.hcl:") {
		t.Fatalf("Run = %v, %v; want the plan's refusal with its line", res, err)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

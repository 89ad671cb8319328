package apply

// The seed's table on a real Ollama that planrun starts itself: three quantizations
// made by Ollama from one seeded F16 model and proved by /api/show, the server pinned to
// a CPU set, and the memory of its processes ordered as the weights are.

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/ollamatest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
)

// ollamaBinary is the pinned Ollama, under the one integration policy.
func ollamaBinary(t *testing.T) string {
	t.Helper()
	return ollamatest.Require(t)
}

const seedTablePlan = `
variable "ollama" { type = string }
variable "dir"    { type = string }
variable "port"   { type = number }
variable "cpus"   { type = string }
locals {
  host  = "127.0.0.1:${var.port}"
  quants = ["f16", "q8_0", "q4_K_M"]
}
server "ollama" {
  command = [var.ollama, "serve"]
  dir     = var.dir
  env = {
    OLLAMA_HOST              = local.host
    OLLAMA_MODELS            = "${var.dir}/models"
    HOME                     = "${var.dir}/home"
    OLLAMA_NUM_PARALLEL      = "1"
    OLLAMA_MAX_LOADED_MODELS = "1"
  }
  ready {
    url     = "http://${local.host}/api/version"
    timeout = "60s"
  }
  log   = "${var.dir}/ollama.log"
  setup = [for q in local.quants : [var.ollama, "create", "tiny-${q}", "--quantize", q, "-f", "Modelfile"]]
}
backend "ollama" "native" {
  url          = "http://${local.host}"
  server       = server.ollama
  ensure_model = "check"
}
hardware "pinned" { cpus = var.cpus }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 8
  warmup_runs   = 1
  repeat_runs   = 1
  requests      = 2
  temperature   = 0
}
matrix "mislabel" {
  model        = ["tiny-25m"]
  quantization = ["q4_K_M"]
  tool         = [backend.ollama.native]
  hardware     = [hardware.pinned]
  workload     = [workload.w]
  model_id     = "tiny-f16"
}
matrix "variants" {
  model        = ["tiny-25m"]
  quantization = local.quants
  tool         = [backend.ollama.native]
  hardware     = [hardware.pinned]
  workload     = [workload.w]
  model_id     = "tiny-${matrix.quantization}"
}
`

// generationRequests counts the generation requests Ollama's own log says it served.
func generationRequests(t *testing.T, log string) int {
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return len(regexp.MustCompile(`(?m)\[GIN\].*"/(api/(chat|generate)|v1/[a-z/]+)"$`).FindAll(b, -1))
}

func TestRealOllamaSeedTable(t *testing.T) {
	bin := ollamaBinary(t)
	dir := t.TempDir()
	if _, err := tinymodel.WriteDir(dir, tinymodel.LargeConfig()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	_, cores, err := procmem.CPUsAllowed(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cpu := strconv.Itoa(cores[len(cores)-1]) // one core: a restriction whenever there are two
	planDir := t.TempDir()
	path := filepath.Join(planDir, "plan.hcl")
	os.WriteFile(path, []byte(seedTablePlan), 0o644)
	p, cells := loadPlanFile(t, path, "ollama="+bin, "dir="+dir, "port="+strconv.Itoa(port), "cpus="+cpu)
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	log := filepath.Join(dir, "ollama.log")

	// A cell that declares q4_K_M for the F16 model: planrun starts the server (whose
	// setup makes the three variants), asks /api/show, and sends nothing.
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells[:1], NewBackend: newBackend, GPU: gpu.Open(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r.Status != ledger.StatusFailed || !strings.Contains(r.Notes, `declares quantization "q4_K_M"`) || !strings.Contains(r.Notes, "serves F16") {
		t.Fatalf("mislabelled cell: %s, %s", r.Status, r.Notes)
	}
	if n := generationRequests(t, log); n != 0 {
		t.Fatalf("the server logged %d generation requests for the mislabelled cell, want 0", n)
	}

	res, err = Run(context.Background(), Options{Plan: p, Cells: cells[1:], NewBackend: newBackend, GPU: gpu.Open(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if generationRequests(t, log) == 0 {
		t.Fatal("the server's log counts no generation request: the count above proves nothing")
	}
	served := map[string]string{"f16": "F16", "q8_0": "Q8_0", "q4_K_M": "Q4_K_M"}
	mem := map[string]float64{}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK {
			t.Fatalf("%s: %s %s", r.CellID, r.Status, r.Notes)
		}
		want := "quantization " + served[r.Quantization] + " from ollama /api/show details.quantization_level"
		if !strings.Contains(r.Notes, want) || !strings.Contains(r.QuantizationSource, "/api/show") {
			t.Errorf("%s: notes lack %q: %s", r.CellID, want, r.Notes)
		}
		if r.CPUsAllowed != cpu {
			t.Errorf("%s: the server was allowed CPUs %q, want %q (Cpus_allowed_list)", r.CellID, r.CPUsAllowed, cpu)
		}
		if !strings.HasPrefix(r.MemSource, procmem.SourceRSS) {
			t.Errorf("%s: memory source %q", r.CellID, r.MemSource)
		}
		mem[r.Quantization] = r.MemPeakGB
		// The margin docs/seed-table.md states, 15%: weights + KV cache for the sequences
		// the server reserves + the CPU overhead came within -10.3% to +10% on the rows
		// measured there; the overhead (the processes' own memory) moves by some 17 MB
		// between runs, all variants alike.
		if !(math.Abs(r.MemEstimateDiffPct) <= 15) {
			t.Errorf("%s: memory %.4f GB is %+.1f%% against the estimate %.4f GB: beyond the stated 15%%", r.CellID, r.MemPeakGB, r.MemEstimateDiffPct, r.VRAMEstimateGB)
		}
		t.Logf("%s: memory %.4f GB (%s), estimate %.4f GB (%+.0f%%), /api/ps size %.4f GB",
			r.Quantization, r.MemPeakGB, r.MemSource, r.VRAMEstimateGB, r.MemEstimateDiffPct, r.ServerSizeGB)
	}
	if !(mem["q4_K_M"] < mem["q8_0"] && mem["q8_0"] < mem["f16"]) {
		t.Errorf("memory does not order as the weights do: %s", fmtMem(mem))
	}
}

func fmtMem(m map[string]float64) string {
	return fmt.Sprintf("q4_K_M %.4f GB, q8_0 %.4f GB, f16 %.4f GB", m["q4_K_M"], m["q8_0"], m["f16"])
}

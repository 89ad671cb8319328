package apply

// A vLLM cell's dtype is read from the server that serves it: vLLM's CPU build started
// with --dtype float16 logs dtype=torch.float16, and a cell declaring fp16 (an alias)
// runs with it filled from that log. A cell declaring bfloat16 (the checkpoint's own
// torch_dtype) is refused by the plan's checks, which read the same --dtype, before
// anything starts. float16 rather than float32: both are served, and a float32 start
// once did not become ready in 10 minutes at load 30.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/testkit/vllmtest"
	"github.com/planrun/planrun/internal/tinymodel"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
)

const vllmDtypePlan = `
variable "vllm" { type = string }
variable "dir"  { type = string }
variable "port" { type = number }
server "vllm" {
  command = [var.vllm, "--model", "${var.dir}/model", "--served-model-name", "tiny",
    "--host", "127.0.0.1", "--port", tostring(var.port), "--max-model-len", "512", "--dtype", "float16"]
  dir         = var.dir
  env         = { VLLM_CPU_KVCACHE_SPACE = "1", VLLM_PIN = "1" }
  stop_signal = "SIGINT"
  grace       = "30s"
  log         = "${var.dir}/vllm.log"
  ready {
    url     = "http://127.0.0.1:${var.port}/health"
    timeout = "10m"
  }
}
backend "openai" "vllm" {
  url    = "http://127.0.0.1:${var.port}/v1"
  server = server.vllm
}
workload "w" {
  prompt        = "hello world" # a fixed text: one request learns its length, none fits it
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "mislabel" {
  model        = ["tiny"]
  quantization = ["bfloat16"]
  tool         = [backend.openai.vllm]
  workload     = [workload.w]
  model_id     = "tiny"
}
matrix "served" {
  model        = ["tiny"]
  quantization = ["fp16"]
  tool         = [backend.openai.vllm]
  workload     = [workload.w]
  model_id     = "tiny"
}
`

func TestRealVLLMDtypeIsReadFromTheServer(t *testing.T) {
	bin := vllmtest.Require(t)
	dir := t.TempDir()
	if err := tinymodel.WriteHFDir(filepath.Join(dir, "model"), tinymodel.HFConfig()); err != nil {
		t.Fatal(err)
	}
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.hcl")
	os.WriteFile(path, []byte(vllmDtypePlan), 0o644)
	p, diags := plan.Load(path, plan.LoadOptions{Vars: []string{"vllm=" + bin, "dir=" + dir, "port=" + strconv.Itoa(port)}, Getenv: func(string) string { return "" }})
	if diags.HasErrors() {
		t.Fatalf("plan: %v", diags)
	}
	all, diags := p.Cells()
	if errs := diags.Errs(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `declares quantization "bfloat16"`) || !strings.Contains(errs[0].Error(), "--dtype float16") {
		t.Fatalf("the plan's checks: %v, want the mislabelled matrix refused for --dtype float16", diags)
	}
	cells, err := plan.SelectCells(all, []string{"served/*"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	good := res.Rows[0]
	if good.Status != ledger.StatusOK || !strings.Contains(good.QuantizationSource, "vLLM start-up log dtype=") ||
		!strings.Contains(good.Notes, "quantization float16 from vLLM start-up log") {
		t.Errorf("served cell: %s, source %q, notes %s", good.Status, good.QuantizationSource, good.Notes)
	}
	if good.KVCacheGB <= 0 || !strings.HasPrefix(good.MemSource, "process tree RSS") {
		t.Errorf("served cell: KV cache %v GB, memory source %q", good.KVCacheGB, good.MemSource)
	}
	// Every completion request in the server's access log is the served cell's: its
	// probe (2 tokens), the one request that learns the fixed prompt text's length
	// (max_tokens 1), and its 2 measured requests.
	b, _ := os.ReadFile(filepath.Join(dir, "vllm.log"))
	if n := len(regexp.MustCompile(`"POST /v1/(chat/)?completions HTTP`).FindAll(b, -1)); n != 4 {
		t.Errorf("the server logged %d completion requests; the served cell's probe, prompt-length request and 2 requests make 4", n)
	}
	t.Logf("vLLM --dtype float16: memory %.3f GB (%s), KV cache %.2f GB", good.MemPeakGB, good.MemSource, good.KVCacheGB)
}

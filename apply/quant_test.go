package apply

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The mock's /api/show says Q4_K_M for every model.
const quantPlan = `
variable "url" { type = string }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "declared" {
  model        = ["tiny"]
  quantization = ["f16", "q4_k_m"]
  tool         = [backend.ollama.mock]
  workload     = [workload.w]
  model_id     = "mock"
}
`

const undeclaredPlan = `
variable "url" { type = string }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "undeclared" {
  model    = ["tiny"]
  tool     = [backend.ollama.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

// TestMislabelledQuantizationSendsNothing: a cell that declares f16 for a model the
// server serves as Q4_K_M fails, naming both, before any generation request reaches the
// server; the cell that declares what is served runs.
func TestMislabelledQuantizationSendsNothing(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, quantPlan, srv.URL)
	var f16 []int
	for i, c := range cells {
		if c.Quantization == "f16" {
			f16 = append(f16, i)
		}
	}
	if len(cells) != 2 || len(f16) != 1 {
		t.Fatalf("%d cells, %d declaring f16", len(cells), len(f16))
	}
	// The f16 cell alone first: the server must see no generation request at all.
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells[f16[0] : f16[0]+1], NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Fatalf("the server received %d generation requests for a mislabelled cell, want 0", n)
	}
	if len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusFailed {
		t.Fatalf("rows %+v", res.Rows)
	}
	if n := res.Rows[0].Notes; !strings.Contains(n, `declares quantization "f16"`) || !strings.Contains(n, "serves Q4_K_M") ||
		!strings.Contains(n, "/api/show") {
		t.Errorf("the failure does not name both quantizations and the source: %s", n)
	}

	// The cell declaring what is served runs, and says where the quantization was read.
	res, err = Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Quantization == "q4_k_m" && (r.Status != ledger.StatusOK || !strings.Contains(r.QuantizationSource, "details.quantization_level")) {
			t.Errorf("matching cell: status %s, source %q, notes %s", r.Status, r.QuantizationSource, r.Notes)
		}
	}
	if mock.Stats().Requests == 0 {
		t.Error("the matching cell sent nothing")
	}
}

func TestUndeclaredQuantizationFilledFromServer(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, undeclaredPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Status != ledger.StatusOK || r.Quantization != "" || !strings.Contains(r.Notes, "quantization Q4_K_M from ollama /api/show") {
		t.Errorf("status %s, quantization %q, notes %s", r.Status, r.Quantization, r.Notes)
	}
	// The served quantization is in its own column, read back from the ledger, and the
	// seed's table shows it in the Quant column.
	rows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(rows) != 1 || rows[0].QuantizationServed != "Q4_K_M" || rows[0].QuantShown() != "Q4_K_M" {
		t.Fatalf("ledger rows %+v, %v: want quantization_served Q4_K_M", rows, err)
	}
	md, err := os.ReadFile(res.ReportPath)
	if err != nil || !regexp.MustCompile(`\| tiny \| Q4_K_M \|`).Match(md) {
		t.Errorf("report's seed table has no Quant Q4_K_M:\n%s (%v)", md, err)
	}
}

func TestServedQuantSources(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "vllm.log")
	os.WriteFile(log, []byte("INFO start\nINFO Initializing a V1 LLM engine (v0.11.0) with config: model='/m', dtype=torch.float32, max_seq_len=512, quantization=None, enforce_eager=True\nINFO Initializing a V1 LLM engine (v0.11.0) with config: model='/m', dtype=torch.bfloat16, quantization=None\n"), 0o644)
	if sq, ok := quantFromLog(log); !ok || sq.level != "bfloat16" || !strings.Contains(sq.source, "log dtype=") {
		t.Errorf("log: %+v %v, want the newest start's bfloat16", sq, ok)
	}
	os.WriteFile(log, []byte("with config: model='/m', dtype=torch.bfloat16, quantization=fp8,\n"), 0o644)
	if sq, _ := quantFromLog(log); sq.level != "fp8" {
		t.Errorf("log with a quantization method: %+v", sq)
	}
	if _, ok := quantFromLog(filepath.Join(dir, "none.log")); ok {
		t.Error("a missing log gave a quantization")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"vllm", "serve", "m", "--dtype", "float32"}, "float32"},
		{[]string{"vllm", "serve", "m", "--dtype=bfloat16", "--quantization", "fp8"}, "fp8"},
		{[]string{"vllm", "serve", "m", "--dtype", "auto"}, ""},
	} {
		sq, _ := quantFromArgs(servers.Spec{Name: "v", Command: c.args})
		if sq.level != c.want {
			t.Errorf("%v: %q, want %q", c.args, sq.level, c.want)
		}
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"torch_dtype":"bfloat16"}`), 0o644)
	if sq, _ := quantFromConfig(dir); sq.level != "bfloat16" || !strings.HasSuffix(sq.source, "config.json torch_dtype") {
		t.Errorf("config: %+v", sq)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"torch_dtype":"float16","quantization_config":{"quant_method":"awq"}}`), 0o644)
	if sq, _ := quantFromConfig(dir); sq.level != "awq" {
		t.Errorf("config with quantization_config: %+v", sq)
	}
	os.WriteFile(log, []byte("(Worker pid=1852) INFO [cpu_worker.py:260] Explicitly set (1.0/20.96) GiB for KV cache on node 0.\n"+
		"(EngineCore pid=948) INFO [kv_cache_utils.py:2327] CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 512 tokens per request: 2048.00x\n"), 0o644)
	if gb, note, ok := kvCacheFromLog(log); !ok || gb != float64(1<<30)/1e9 || !strings.Contains(note, "1,048,576 tokens") {
		t.Errorf("KV cache from the log: %v GB, %q, %v", gb, note, ok)
	}
}

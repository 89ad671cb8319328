package served

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/servers"
)

func TestServedQuantSources(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "vllm.log")
	os.WriteFile(log, []byte("INFO start\nINFO Initializing a V1 LLM engine (v0.11.0) with config: model='/m', dtype=torch.float32, max_seq_len=512, quantization=None, enforce_eager=True\nINFO Initializing a V1 LLM engine (v0.11.0) with config: model='/m', dtype=torch.bfloat16, quantization=None\n"), 0o644)
	if sq, ok := QuantFromLog(log); !ok || sq.Level != "bfloat16" || !strings.Contains(sq.Source, "log dtype=") {
		t.Errorf("log: %+v %v, want the newest start's bfloat16", sq, ok)
	}
	os.WriteFile(log, []byte("with config: model='/m', dtype=torch.bfloat16, quantization=fp8,\n"), 0o644)
	if sq, _ := QuantFromLog(log); sq.Level != "fp8" {
		t.Errorf("log with a quantization method: %+v", sq)
	}
	if _, ok := QuantFromLog(filepath.Join(dir, "none.log")); ok {
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
		sq, _ := QuantFromArgs(servers.Spec{Name: "v", Command: c.args})
		if sq.Level != c.want {
			t.Errorf("%v: %q, want %q", c.args, sq.Level, c.want)
		}
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"torch_dtype":"bfloat16"}`), 0o644)
	if sq, _ := QuantFromConfig(dir); sq.Level != "bfloat16" || !strings.HasSuffix(sq.Source, "config.json torch_dtype") {
		t.Errorf("config: %+v", sq)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"torch_dtype":"float16","quantization_config":{"quant_method":"awq"}}`), 0o644)
	if sq, _ := QuantFromConfig(dir); sq.Level != "awq" {
		t.Errorf("config with quantization_config: %+v", sq)
	}
	os.WriteFile(log, []byte("(Worker pid=1852) INFO [cpu_worker.py:260] Explicitly set (1.0/20.96) GiB for KV cache on node 0.\n"+
		"(EngineCore pid=948) INFO [kv_cache_utils.py:2327] CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 512 tokens per request: 2048.00x\n"), 0o644)
	if gb, note, ok := KVCacheFromLog(log); !ok || gb != float64(1<<30)/1e9 || !strings.Contains(note, "1,048,576 tokens") {
		t.Errorf("KV cache from the log: %v GB, %q, %v", gb, note, ok)
	}
}

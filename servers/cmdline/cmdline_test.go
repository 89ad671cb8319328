package cmdline

import (
	"reflect"
	"testing"
)

func TestRead(t *testing.T) {
	for _, c := range []struct {
		name string
		cmd  []string
		env  map[string]string
		want Stated
		ok   bool
	}{
		{"vllm serve", []string{"vllm", "serve", "Qwen/Qwen2.5-7B", "--port", "8001", "--dtype=bfloat16", "--max-model-len", "2k"}, nil,
			Stated{Engine: "vllm", Model: "Qwen/Qwen2.5-7B", Served: []string{"Qwen/Qwen2.5-7B"}, StrictNames: true, Dtype: "bfloat16",
				Port: 8001, PortFrom: "--port", MaxModelLen: 2000, MaxModelLenText: "2k"}, true},
		{"vllm names and adapters", []string{"/opt/bin/vllm-serve", "--model", "m", "--served-model-name", "a", "b", "--enable-lora",
			"--lora-modules", "sql=/ad/sql", `{"name": "chat", "path": "/ad/chat"}`, "--no-enable-prefix-caching", "-q", "awq", "-tp", "2"}, nil,
			Stated{Engine: "vllm", Model: "m", Served: []string{"a", "b"}, StrictNames: true, Quantization: "awq", Port: 8000, PortFrom: "the default",
				LoRA: true, Adapters: []string{"sql", "chat"}, NoPrefixCache: true, TensorParallel: 2}, true},
		{"vllm module, auto dtype, a flag's value that is no model", []string{"python", "-m", "vllm.entrypoints.openai.api_server", "--max-num-seqs", "8", "--dtype", "auto", "--enable-lora=false"}, nil,
			Stated{Engine: "vllm", StrictNames: true, Port: 8000, PortFrom: "the default"}, true},
		{"sglang", []string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "30001", "--context-length", "4096", "--disable-radix-cache"}, nil,
			Stated{Engine: "sglang", Model: "m", Served: []string{"m"}, Port: 30001, PortFrom: "--port", MaxModelLen: 4096, MaxModelLenText: "4096", NoPrefixCache: true}, true},
		{"llama-server", []string{"llama-server", "-m", "q4.gguf", "-a", "tiny", "--port", "8081"}, nil,
			Stated{Engine: "llama.cpp", Model: "q4.gguf", Served: []string{"tiny"}, Port: 8081, PortFrom: "--port"}, true},
		{"ollama, address from its environment", []string{"/x/.tools/bin/ollama", "serve"}, map[string]string{"OLLAMA_HOST": "127.0.0.1:11500"},
			Stated{Engine: "ollama", Host: "127.0.0.1", Port: 11500, PortFrom: "OLLAMA_HOST"}, true},
		{"ollama, a scheme and a bare host", []string{"ollama", "serve"}, map[string]string{"OLLAMA_HOST": "http://0.0.0.0"},
			Stated{Engine: "ollama", Host: "0.0.0.0", Port: 11434, PortFrom: "the default"}, true},
		{"ollama pull is no server", []string{"ollama", "pull", "m"}, nil, Stated{}, false},
		{"mock server", []string{"./planrun", "mock-server", "-addr", "127.0.0.1:18000", "-models=a,b"}, nil,
			Stated{Engine: "mock-server", Host: "127.0.0.1", Port: 18000, PortFrom: "-addr", Served: []string{"a", "b"}, StrictNames: true}, true},
		{"litellm", []string{"litellm", "--config", "c.yaml", "--port", "4001"}, nil,
			Stated{Engine: "litellm", Port: 4001, PortFrom: "--port"}, true},
		{"a script named after vLLM: no default port", []string{"./run-vllm.sh", "--served-model-name", "m"}, nil,
			Stated{Engine: "vllm", Served: []string{"m"}, StrictNames: true, Wrapper: true}, true},
		{"a script named after vLLM, its port given", []string{"./run-vllm.sh", "--port", "8001"}, nil,
			Stated{Engine: "vllm", StrictNames: true, Wrapper: true, Port: 8001, PortFrom: "--port"}, true},
		{"a script named after Ollama", []string{"./my-ollama", "serve"}, nil, Stated{Engine: "ollama", Wrapper: true}, true},
		{"a shell line says nothing", []string{"/bin/sh", "-c", "vllm serve m"}, nil, Stated{}, false},
		{"empty", nil, nil, Stated{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Read(c.cmd, c.env)
			if ok != c.ok || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Read(%q) = %+v, %v\nwant %+v, %v", c.cmd, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestParseTokens(t *testing.T) {
	for in, want := range map[string]int{"4096": 4096, "4k": 4000, "1K": 1000, "1m": 1000000, "": 0, "x": 0, "-5": 0} {
		if got := ParseTokens(in); got != want {
			t.Errorf("ParseTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

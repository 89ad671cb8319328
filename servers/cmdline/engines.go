package cmdline

import (
	"slices"
	"strings"
)

// engines are the command lines Read knows, tried in order.
var engines = []engine{vllm, sglang, llamaServer, ollama, litellm, mockServer}

// vllm is `vllm serve MODEL …`, a wrapper named after it (vllm-serve), or
// `python -m vllm.entrypoints.openai.api_server …`. It refuses a model name it does not
// serve (404), and requests past --max-model-len.
var vllm = engine{
	name: "vllm",
	args: func(cmd []string) ([]string, bool) {
		if i := slices.IndexFunc(cmd, func(a string) bool { return strings.HasPrefix(a, "vllm.entrypoints") }); i >= 0 {
			return cmd[i+1:], true
		}
		if !strings.Contains(program(cmd), "vllm") {
			return nil, false
		}
		args := cmd[1:]
		if len(args) > 0 && args[0] == "serve" {
			args = args[1:]
		}
		return args, true
	},
	exact: func(cmd []string) bool {
		return program(cmd) == "vllm" || program(cmd) == "vllm-serve" || slices.ContainsFunc(cmd, func(a string) bool { return strings.HasPrefix(a, "vllm.entrypoints") })
	},
	modelFirst:  true,
	defaultPort: 8000,
	strictNames: true,
	flags: []flag{
		{[]string{"--model"}, one, model},
		{[]string{"--served-model-name"}, many, served},
		{[]string{"--dtype"}, one, dtype},
		{[]string{"--quantization", "-q"}, one, quant},
		{[]string{"--host"}, one, host},
		{[]string{"--port"}, one, port("--port")},
		{[]string{"--enable-lora"}, none, switchOn(lora, true)},
		{[]string{"--lora-modules"}, many, loraModules},
		{[]string{"--no-enable-prefix-caching"}, none, switchOn(noPrefixCache, true)},
		{[]string{"--enable-prefix-caching"}, none, switchOn(noPrefixCache, false)},
		{[]string{"--max-model-len"}, one, maxLen},
		{[]string{"--tensor-parallel-size", "-tp"}, one, tensorParallel},
	},
}

// sglang is `python -m sglang.launch_server …` or `sglang serve …`.
var sglang = engine{
	name: "sglang",
	args: func(cmd []string) ([]string, bool) {
		if i := slices.Index(cmd, "sglang.launch_server"); i >= 0 {
			return cmd[i+1:], true
		}
		if program(cmd) == "sglang" && len(cmd) > 1 && cmd[1] == "serve" {
			return cmd[2:], true
		}
		return nil, false
	},
	defaultPort: 30000,
	flags: []flag{
		{[]string{"--model-path", "--model"}, one, model},
		{[]string{"--served-model-name"}, one, served},
		{[]string{"--dtype"}, one, dtype},
		{[]string{"--quantization"}, one, quant},
		{[]string{"--host"}, one, host},
		{[]string{"--port"}, one, port("--port")},
		{[]string{"--context-length"}, one, maxLen},
		{[]string{"--tp-size", "--tp"}, one, tensorParallel},
		{[]string{"--lora-paths"}, many, func(s *Stated, v []string) { s.LoRA = true; loraModules(s, v) }},
		{[]string{"--disable-radix-cache"}, none, switchOn(noPrefixCache, true)},
	},
}

// llamaServer is llama.cpp's `llama-server -m FILE …`.
var llamaServer = engine{
	name: "llama.cpp",
	args: func(cmd []string) ([]string, bool) {
		return cmd[min(1, len(cmd)):], strings.HasPrefix(program(cmd), "llama-server")
	},
	defaultPort: 8080,
	flags: []flag{
		{[]string{"-m", "--model"}, one, model},
		{[]string{"-a", "--alias"}, one, served},
		{[]string{"--host"}, one, host},
		{[]string{"--port"}, one, port("--port")},
		{[]string{"--lora"}, many, func(s *Stated, _ []string) { s.LoRA = true }},
	},
}

// ollama is `ollama serve`: its address comes from OLLAMA_HOST.
var ollama = engine{
	name:  "ollama",
	exact: func(cmd []string) bool { return program(cmd) == "ollama" },
	args: func(cmd []string) ([]string, bool) {
		return nil, strings.Contains(program(cmd), "ollama") && len(cmd) > 1 && cmd[1] == "serve"
	},
	defaultPort: 11434,
	env: func(s *Stated, env map[string]string) {
		if h, ok := env["OLLAMA_HOST"]; ok && h != "" {
			listenAddress("OLLAMA_HOST")(s, []string{h})
		}
	},
}

// litellm is the LiteLLM proxy, `litellm --config FILE --port N`.
var litellm = engine{
	name: "litellm",
	args: func(cmd []string) ([]string, bool) {
		return cmd[min(1, len(cmd)):], program(cmd) == "litellm"
	},
	defaultPort: 4000,
	flags: []flag{
		{[]string{"--model"}, one, model},
		{[]string{"--host"}, one, host},
		{[]string{"--port"}, one, port("--port")},
	},
}

// mockServer is `planrun mock-server -addr HOST:PORT`; with -models it serves only those
// names.
var mockServer = engine{
	name: "mock-server",
	args: func(cmd []string) ([]string, bool) {
		if len(cmd) > 1 && cmd[1] == "mock-server" && strings.Contains(program(cmd), "planrun") {
			return cmd[2:], true
		}
		return nil, false
	},
	defaultPort: 8000,
	flags: []flag{
		{[]string{"-addr", "--addr"}, one, listenAddress("-addr")},
		{[]string{"-models", "--models"}, one, func(s *Stated, v []string) {
			for _, m := range strings.Split(first(v), ",") {
				if m = strings.TrimSpace(m); m != "" {
					s.Served, s.StrictNames = append(s.Served, m), true
				}
			}
		}},
	},
}

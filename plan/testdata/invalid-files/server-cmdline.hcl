# A managed server's command line is read for what it states (served names, dtype and
# quantization, port, tensor-parallel size) and held against its cells, its ready check
# and its hardware, whether it is given as a list or as a program and args.
server "line" {
  command = "vllm serve Qwen/Qwen2.5-0.5B --port 8100" # ERROR: Command is one string ~ command = ["vllm", "serve", "Qwen/Qwen2.5-0.5B", "--port", "8100"]
}
server "awq" {
  command = "vllm"
  args    = ["serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--served-model-name", "qwen", "--quantization", "awq", "--port", "8101"]
  ready {
    url = "http://127.0.0.1:8000/health" # ERROR: Ready URL misses the server's port ~ the server listens on port 8101 (vllm --port 8101)
  }
}
server "half" {
  command = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", "qwen", "--dtype", "float16", "--port", "8102"] # ERROR: Quantization contradicts the server ~ runs with --dtype float16
}
server "named" {
  command = ["vllm", "serve", "org/Model-7B", "--port", "8103"] # ERROR: Server does not serve the model ~ serves only "org/Model-7B"
}
server "fp8" {
  # awq declared on a server started with --quantization fp8, and a method beside an
  # activation dtype (awq with --dtype float16) is no contradiction.
  command = ["vllm", "serve", "m", "--served-model-name", "QWEN", "--quantization", "fp8", "--dtype", "float16", "--port", "8104"] # ERROR: Quantization contradicts the server ~ --quantization fp8
}
server "ollama" {
  command = ["ollama", "serve"]
  env     = { OLLAMA_HOST = "127.0.0.1:11500" }
  ready {
    url = "http://127.0.0.1:11500/api/version"
  }
}
server "mock" {
  command = ["planrun", "mock-server", "-addr", "127.0.0.1:18000"]
  setup = [
    ["curl", "-s", "http://127.0.0.1:18000/v1/models"],
    ["curl -s http://127.0.0.1:18000/health"], # ERROR: Command is one string ~ setup[1] = ["curl", "-s", "http://127.0.0.1:18000/health"]
  ]
  ready {
    url = "http://gpu-node-7:9000/health" # another host: its port may be a proxy's, not checked
  }
}
backend "openai" "line" {
  url    = "http://127.0.0.1:8100/v1"
  server = server.line
}
backend "openai" "awq" {
  url    = "http://127.0.0.1:8101/v1"
  server = server.awq
}
backend "openai" "half" {
  url    = "http://127.0.0.1:8102/v1"
  server = server.half
}
backend "openai" "named" {
  url    = "http://127.0.0.1:8103/v1"
  server = server.named
}
backend "openai" "fp8" {
  url    = "http://127.0.0.1:8104/v1"
  server = server.fp8
}
backend "ollama" "o" {
  url    = "http://localhost:11434" # ERROR: Backend URL misses the server's port ~ server "ollama" listens on port 11500 (ollama OLLAMA_HOST 11500)
  server = server.ollama
}
backend "openai" "mock" {
  url    = "http://127.0.0.1:18000/v1"
  server = server.mock
}
workload "w" {
  prompt_tokens = 16
}
matrix "awq" {
  model        = ["qwen"]
  quantization = ["awq"]
  tool         = [backend.openai.line, backend.openai.awq, backend.openai.fp8]
  workload     = [workload.w]
}
matrix "half" {
  model        = ["qwen"]
  quantization = ["bf16"]
  tool         = [backend.openai.half]
  workload     = [workload.w]
}
matrix "named" {
  model    = ["model-7b"]
  tool     = [backend.openai.named, backend.ollama.o, backend.openai.mock]
  workload = [workload.w]
}

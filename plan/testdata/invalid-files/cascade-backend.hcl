# One mistake in a backend must not make the correct lines that use it wrong.
backend "ollama" "local" {
  api_key = "sk-123" # ERROR: Literal API key in plan
}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
workload "w" {}
matrix "m" {
  model        = ["a", "b"]
  quantization = ["q4", "fp8"]
  tool         = [backend.ollama.local, backend.openai.vllm]
  workload     = [workload.w]
  model_id     = "${matrix.model}-${matrix.tool.name}"
  exclude {
    tool         = backend.ollama.local
    quantization = "fp8"
  }
  exclude {
    tool  = backend.openai.vllm
    model = "b"
  }
  include {
    model        = "c"
    quantization = "q4"
    tool         = backend.ollama.local
  }
}
reference "r" {
  match  = { tool = backend.ollama.local, model = "a" }
  ttft_s = [0.1, 1]
}

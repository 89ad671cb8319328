variable "port" {
  type    = number
  default = 8000
}
server "vllm_awq" {
  command = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--served-model-name", "qwen2.5-7b", "--port", tostring(var.port)]
  env     = { CUDA_VISIBLE_DEVICES = "0" }
  ready {
    url     = "http://127.0.0.1:${var.port}/health"
    timeout = "5m"
  }
  grace = "30s"
  log   = "logs/awq.log"
}
server "vllm_fp8" {
  command     = "vllm"
  args        = ["serve", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", "qwen2.5-7b", "--quantization", "fp8", "--port", tostring(var.port)]
  stop_signal = "INT"
  setup       = [["curl", "-s", "http://127.0.0.1:${var.port}/v1/models"]]
}
server "ollama" {
  command = ["ollama", "serve"]
}
backend "ollama" "local" {
  server = server.ollama
}
backend "openai" "vllm" {
  url = "http://127.0.0.1:${var.port}/v1"
}
workload "w" {}
matrix "m" {
  model        = ["qwen2.5-7b"]
  quantization = ["awq", "fp8"]
  tool         = [backend.ollama.local, backend.openai.vllm]
  workload     = [workload.w]
  server       = matrix.tool.kind == "openai" ? server["vllm_${matrix.quantization}"] : matrix.tool.kind == "ollama" ? server.ollama : null
}

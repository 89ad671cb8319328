# A newcomer's first Ollama-against-vLLM plan, copied from the example and edited.
variable "vllm_port" {
  type    = number
  default = "8000/tcp" # ERROR: Invalid value for variable
}
variable "quant" {
  type    = string
  default = null
}
locals {
  vllm_url = "http://127.0.0.1:${var.vllm_port}"
  hf_repo = {
    "qwen2.5-7b" = { awq = "Qwen/Qwen2.5-7B-Instruct-AWQ", fp8 = "Qwen/Qwen2.5-7B-Instruct" }
  }
}
server "ollama" {
  command = ["ollama", "serve"]
}
server "vllm_awq" {
  command = "vllm"
  args    = ["serve", local.hf_repo["qwen2.5-7b"].awq, "--port", tostring(var.vllm_port)]
  ready {
    url     = "${local.vllm_url}/health"
    timeout = "10 minutes" # ERROR: Invalid duration
  }
}
server "vllm_fp8" {
  command = ["vllm", "serve", local.hf_repo["qwen2.5-7b"].fp8]
}
backend "ollama" "local" {
  server = server.ollama
}
backend "openai" "vllm" {
  url = "${local.vllm_url}/v1"
  headers = {
    "X-Team"      = "bench"
    Authorization = "Bearer ${var.quant}" # ERROR: Invalid template interpolation value
  }
}
hardware "rtx5090" {
  gpu     = "NVIDIA GeForce RTX 5090"
  vram_gb = "32GB" # ERROR: Invalid vram_gb
}
workload "short" {
  concurrency = [1, 4, 16, 4] # ERROR: Duplicate concurrency level
  measure     = ["ttft", "tpot", "throughput", "vram"]
}
matrix "qwen" {
  model        = ["qwen2.5-7b"]
  quantization = ["q4_K_M", "awq", "fp8", "int4"]
  tool         = [backend.ollama.local, backend.openai.vllm]
  hardware     = [hardware.rtx5090]
  workload     = [workload.short]
  exclude {
    tool         = backend.ollama.local
    quantization = ["awq", "fp8", "int4"]
  }
  exclude {
    tool         = backend.openai.vllm
    quantization = "q4_K_M"
  }
  model_id = (matrix.tool.kind == "ollama"
    ? "qwen2.5:7b-instruct-${lower(matrix.quantization)}"
  : local.hf_repo[matrix.model][matrix.quantization]) # ERROR: Missing key
  server = matrix.tool.kind == "openai" ? server["vllm_${matrix.quantization}"] : server.ollama # ERROR: Missing key
}
reference "rtx5090-7b" {
  match  = { hardware = "rtx5090", quantization = var.quant } # ERROR: Invalid match value
  ttft_s = [0.4, 0.2] # ERROR: Invalid range
}
expect "no-errors" {
  condition = result.error_rate # ERROR: Invalid condition
}

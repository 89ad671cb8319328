locals {
  ids = { a = "org/a", b = "org/b" }
}
backend "ollama" "local" {}
server "vllm_fp8" {
  command = ["vllm", "serve", "--port", "11434"]
}
server "vllm_int4" {
  command = ["vllm", "serve", "--port", "11434"]
}
workload "w" {}
matrix "m" {
  model        = ["a", "c"]
  quantization = ["fp8", "q4"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  model_id     = local.ids[matrix.model] # ERROR: Missing key
  server       = server["vllm_${matrix.quantization}"] # ERROR: Missing key
}

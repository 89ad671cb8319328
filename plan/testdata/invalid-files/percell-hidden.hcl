# Mistakes in per-cell expressions are reported with every other mistake, in one run.
variable "port" {
  type    = number
  default = "x" # ERROR: Invalid value for variable
}
backend "ollama" "local" {}
backend "openai" "vllm" {
  url = "ftp://x" # ERROR: Invalid backend URL
}
server "vllm_fp8" {
  command = ["vllm", "serve", "--port", "11434"]
}
workload "w" {}
matrix "m" {
  model        = ["a"]
  quantization = ["fp8", "q4"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  model_id     = upper(matrix.model, 1) # ERROR: Too many function arguments
  notes        = matrix.model + 1 # ERROR: Invalid operand
  server       = server["vllm_${matrix.quantization}"] # ERROR: Missing key
}
matrix "n" {
  model    = ["a"]
  tool     = [backend.openai.vllm]
  workload = [workload.w]
  model_id = lower(matrix.model, 2) # ERROR: Too many function arguments
  notes    = nosuch(matrix.model) # ERROR: Call to unknown function
}

# Ten mistakes in different parts, each reported on its own line in one run.
variable "models" {
  type    = list(string)
  default = ["qwen2.5-7b", 3]
}
variable "tool" {
  default = null
}
backend "ollama" "local" {
  keep_alive = "forever" # ERROR: Invalid keep_alive
}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
  api = "chatt" # ERROR: Invalid api
}
hardware "h" {
  vram_gb = "8GB" # ERROR: Invalid vram_gb
}
workload "w" {
  measure = ["ttft", "vrm"] # ERROR: Unknown measure
  goal    = result.error_rate # ERROR: Invalid goal
}
matrix "m" {
  model    = var.models
  tool     = [backend.ollama.local, var.tool] # ERROR: Invalid tool
  hardware = [hardware.h]
  workload = [workload.w]
  model_id = matrix.modle # ERROR: Unknown matrix dimension
  notes    = 1 + "x" # ERROR: Invalid operand
  exclude {
    tool = backend.ollama.local
  }
}
expect "e" {
  condition = result.ttft_p50_s # ERROR: Invalid condition
}
output "csv" {
  pth = "x.csv" # ERROR: Unsupported argument
}

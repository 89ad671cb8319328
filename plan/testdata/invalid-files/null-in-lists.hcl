variable "models" {
  default = ["a", null]
}
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = var.models # ERROR: Invalid model
  tool     = [backend.ollama.local]
  workload = [workload.w]
  model_id = null
}
expect "e" {
  condition = result.ttft_p50_s < 1
  cells     = ["m/*", null] # ERROR: Invalid cells
}

variable "url" {
  default = "http://127.0.0.1:11434"
}
locals {
  a = local.b # ERROR: Cycle in local values
  b = local.a # ERROR: Cycle in local values
  c = local.a # ERROR: Cycle in local values
}
backend "ollama" "local" {
  url = var.ulr # ERROR: Reference to undeclared variable
}
backend "ollama" "local" { # ERROR: Duplicate backend block
}
workload "w" {
  prompt_tokens = colour # ERROR: Unknown variable
}
hardware "h" {
  gpu = matrix.model # ERROR: Reference not available here
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  model_id = matrix.modle # ERROR: Unknown matrix dimension
}
expect "e" {
  condition = result.ttft_p50 < 1 # ERROR: Unknown result value
}

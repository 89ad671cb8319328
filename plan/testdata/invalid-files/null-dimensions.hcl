# A whole dimension that is null is a mistake, not "no values".
variable "models" {
  type    = list(string)
  default = null
}
backend "ollama" "local" {}
workload "w" {}
hardware "h" {}
matrix "m" {
  model    = var.models # ERROR: Invalid model
  tool     = [backend.ollama.local]
  workload = null # ERROR: Invalid workload
  hardware = [null] # ERROR: Invalid hardware
}

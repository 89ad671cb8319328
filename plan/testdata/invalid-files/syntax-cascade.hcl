# A syntax error is the one error of its block: the value it hid is not also "missing".
variable "n" { type = number  default = 4 } # ERROR: Invalid single-argument block definition
backend "ollama" "local" {}
workload "w" {
  concurrency = [var.n]
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

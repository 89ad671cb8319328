# A variable defaulting to null where a string or a block reference is expected.
variable "tool" {
  type    = string
  default = null
}
variable "quant" {
  type    = string
  default = null
}
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model        = ["a"]
  quantization = [var.quant] # ERROR: Invalid quantization
  tool         = [var.tool] # ERROR: Invalid tool
  workload     = [workload.w]
}
reference "r" {
  match  = { model = "a", quantization = var.quant } # ERROR: Invalid match value
  ttft_s = [0.1, 1]
}
variable "any" {
  default = null
}
matrix "n" {
  model    = ["a"]
  tool     = [var.any] # ERROR: Invalid tool
  workload = [workload.w]
}

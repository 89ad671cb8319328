# A variable whose value failed (type or validation) is unknown where it is used.
variable "port" {
  type    = number
  default = "eighty" # ERROR: Invalid value for variable
}
variable "models" {
  type    = list(string)
  default = ["a"] # ERROR: Invalid value for variable
  validation {
    condition     = length(var.models) > 1
    error_message = "Compare at least two models."
  }
}
variable "quant" {
  default = "q4"
  validation {
    condition     = contains(["q4", "fp8"], var.quant)
    error_message = "q4 or fp8."
  }
}
backend "ollama" "local" {
  url = "http://127.0.0.1:${var.port}"
}
workload "w" {}
matrix "m" {
  model        = var.models
  quantization = [var.quant]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  model_id     = "${matrix.model}:${var.port}"
  exclude {
    model = "a"
  }
}

variable "concurrency" {
  type    = list(number)
  default = [0, 1] # ERROR: Invalid value for variable
  validation {
    condition     = min(var.concurrency...) > 0
    error_message = "Each level is at least 1."
  }
}
variable "url" {
  type    = string
  default = "localhost" # ERROR: Invalid value for variable
  validation {
    condition     = substr(var.url, 0, 4) == "http"
    error_message = "A URL with a scheme."
  }
}
backend "ollama" "local" {
  url = var.url
}
workload "w" {
  concurrency = var.concurrency
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

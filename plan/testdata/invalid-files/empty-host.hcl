# URLs whose host is empty once interpolated: every place a URL is taken.
variable "host" { default = "" }
variable "port" { default = "9400" }
server "s" {
  command = ["true"]
  ready {
    url = "http://${var.host}:8000/health" # ERROR: Invalid ready URL
  }
}
backend "openai" "v" {
  url = "http://${var.host}:${var.port}/v1" # ERROR: Invalid backend URL
}
backend "ollama" "o" {
  url = "http://:11434" # ERROR: Invalid backend URL
}
backend "openai" "ok" {
  url = "http://[::1]:8000/v1"
}
hardware "h" {
  host = "gpu-a"
  telemetry {
    dcgm = "http://${var.host}:${var.port}/metrics" # ERROR: Invalid dcgm URL
  }
}
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v, backend.ollama.o, backend.openai.ok]
  hardware = [hardware.h]
  workload = [workload.w]
}
matrix "u" {
  model    = ["a"]
  tool     = [backend.openai.ok]
  workload = [workload.w]
  url      = "https://${var.host}/v1" # ERROR: Invalid url
}

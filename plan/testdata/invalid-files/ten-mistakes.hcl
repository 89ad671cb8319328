# Ten independent mistakes: every one must be reported, each on its line.
variable "port" {
  type    = number
  default = "eighty" # ERROR: Invalid value for variable
}
backend "ollama" "local" {
  url     = "http://127.0.0.1:11434"
  api_key = "sk-123" # ERROR: Literal API key in plan
}
backend "openai" "vllm" {
  url = "ftp://example" # ERROR: Invalid backend URL
  api = "chatt" # ERROR: Invalid api
}
backend "grpc" "x" { # ERROR: Unknown backend kind
}
hardware "gpu" {
  vram_gb = -1 # ERROR: Invalid vram_gb
}
workload "short" {
  measure     = ["ttft", "tpott"] # ERROR: Unknown measure
  concurrency = [1, 0] # ERROR: Invalid concurrency
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.locl] # ERROR: Reference to undeclared backend
  workload = [workload.short]
}
output "parquet" { # ERROR: Unknown output kind
}

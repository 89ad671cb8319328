backend "ollama" "local" {}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
workload "reason" {
  reasoning_effort = "extreme" # ERROR: Invalid reasoning_effort
  think            = "yes" # ERROR: Invalid think
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.ollama.local, backend.openai.vllm]
  workload = [workload.reason]
}

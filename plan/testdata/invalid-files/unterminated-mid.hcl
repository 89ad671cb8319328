backend "ollama" "local" {}
workload "w" {
  prompt = "hello # ERROR: Unterminated template string
  max_tokens = 10
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

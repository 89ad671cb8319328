backend "ollama" "local" {
  url = "http://127.0.0.1:11434 # ERROR: Unterminated template string
}
workload "w" {
  max_tokens = 10
}

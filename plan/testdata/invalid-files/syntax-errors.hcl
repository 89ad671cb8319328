backend "ollama" "local" {
  url = "http://127.0.0.1:11434"
}
workload "w" {
  concurrency = [1, 2,, 4] # ERROR: Invalid expression
}

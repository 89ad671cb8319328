backend "ollama" "local" { # ERROR: Unclosed configuration block
  url = "http://127.0.0.1:11434"

workload "w" {
  max_tokens = 10
}

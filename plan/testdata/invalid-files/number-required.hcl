backend "ollama" "local" {}
hardware "h" {
  vram_gb = "eight" # ERROR: Invalid vram_gb
}
workload "w" {
  prompt_tokens = "many" # ERROR: Invalid prompt_tokens
  max_tokens    = [1] # ERROR: Invalid max_tokens
  temperature   = "hot" # ERROR: Invalid temperature
  concurrency   = ["one"] # ERROR: Invalid concurrency
}
reference "r" {
  match        = { model = "a" }
  output_tok_s = ["a", "b"] # ERROR: Invalid output_tok_s
}

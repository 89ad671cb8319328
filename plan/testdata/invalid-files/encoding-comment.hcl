backend "ollama" "local" {}
# café in a comment, saved as Latin-1 # ERROR: Invalid file encoding
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

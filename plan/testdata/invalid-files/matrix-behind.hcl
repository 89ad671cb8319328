# Mistakes behind a matrix that cannot be expanded, and a misspelt exclude.
backend "ollama" "local" {}
workload "w" {}
matrix "n" {
  model    = ["a"]
  tool     = ["ollama.local", "ollama.local"] # ERROR: Duplicate matrix value
  workload = workload.w
  notes    = matrix # ERROR: Invalid notes
  model_id = [matrix.model] # ERROR: Invalid model_id
  exclude {
    modle = "a" # ERROR: Unsupported argument
  }
}

# The matrix itself is wrong and so are its per-cell expressions: both reported.
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = [] # ERROR: Empty matrix dimension
  tool     = [backend.ollama.local]
  workload = [workload.w]
  model_id = lower(matrix.model, "x") # ERROR: Too many function arguments
  notes    = tostring([1]) # ERROR: Invalid function argument
  include {
    model    = "z"
    model_id = nosuch() # ERROR: Call to unknown function
  }
}

# A misspelt block type or backend kind is one error: the references to the block it
# declares are not also "undeclared".
backend "olama" "o" {} # ERROR: Unknown backend kind ~ Did you mean "ollama"?
worklaod "w" { # ERROR: Unsupported block type ~ Did you mean "workload"?
  concurrency = [1, 2]
}
varible "levels" { # ERROR: Unsupported block type ~ Did you mean "variable"?
  default = [1, 4]
}
workload "x" {
  concurrency = var.levels
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.olama.o]
  workload = [workload.w, workload.x]
}
expect "e" {
  cells     = ["m/*"]
  condition = result.error_rate == 0
}

backend "ollama" "local" {}
workload "w" {
  concurrency = [0] # ERROR: Invalid concurrency
}
workload "x" {}
matrix "m" { # ERROR: Matrix has no cells
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w, workload.x]
  model_id = "${matrix.model}:${matrix.workload.max_tokens}"
  exclude {
    workload = workload.x
  }
  exclude {
    workload = workload.w
  }
}
matrix "n" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  notes    = "${matrix.workload.prompt_tokens} tokens"
}

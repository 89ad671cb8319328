backend "ollama" "local" {}
workload "w" {
  goal = result.ttft_p50 < 1 # ERROR: Unknown result value ~ A goal can use result.
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

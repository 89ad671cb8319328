backend "ollama" "local" {}
workload "w" {
  goal = result.ttft_p50 < 1 # ERROR: Unknown result value ~ A goal can use result.<figure>, and there is no "ttft_p50". Did you mean "ttft_p50_s"?
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

variable "limit" {
  default = 2
}
backend "ollama" "local" {}
workload "a" {
  goal = result.ttft_p99_s < var.limit && result.error_rate < 0.01
}
workload "b" {
  goal = "fast" # ERROR: Invalid goal ~ A goal must be true or false
}
workload "c" {
  goal = result.ttft_p99_s * 2 # ERROR: Invalid goal
}
workload "d" {
  goal = result.stability == "stable" ? 1 : 0 # ERROR: Invalid goal
}
workload "e" {
  goal = contains(["stable"], result.stability)
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.a, workload.b, workload.c, workload.d, workload.e]
}

# Conditions are checked at validate time, not after every measurement.
backend "ollama" "local" {}
workload "w" {
  goal = result.ttft_p50_s # ERROR: Invalid goal
}
workload "g" {
  goal = result.model > 3 # ERROR: Invalid operand
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w, workload.g]
}
expect "rate" {
  condition = result.error_rate # ERROR: Invalid condition
}
expect "str" {
  condition = result.stability == "stable" && result.tool # ERROR: Invalid operand
}
expect "ok" {
  condition = result.stability == "stable" && result.ttft_p99_s < 2
}
expect "null" {
  condition = null # ERROR: Invalid condition
}
expect "glob" {
  condition = result.ttft_p50_s < 1
  cells     = ["m/a/*", "n/*"] # ERROR: Cells match nothing
}
expect "func" {
  condition = max(result.ttft_p50_s, "x") < 1 # ERROR: Invalid function argument
}

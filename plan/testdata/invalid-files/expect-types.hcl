backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}
expect "ok" {
  condition = result.ttft_p50_s < 1 || result.requests == 0
  cells     = ["m/a/*"]
}
expect "number" {
  condition = result.output_tok_s # ERROR: Invalid condition ~ this one is a number
}
expect "string" {
  condition = result.stability # ERROR: Invalid condition ~ this one is a string
}
expect "list" {
  condition = [result.failed == 0] # ERROR: Invalid condition
}
expect "arith" {
  condition = result.cell + 1 > 0 # ERROR: Invalid operand
}
expect "glob" {
  condition = true
  cells     = [
    "m/a/*",
    "m/c/*", # ERROR: Cells match nothing
    "x/*", # ERROR: Cells match nothing
  ]
}
expect "message" {
  condition     = result.failed == 0
  error_message = ["x"] # ERROR: Invalid error_message
}

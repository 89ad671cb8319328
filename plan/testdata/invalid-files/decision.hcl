variable "max_gb" { default = 8 }
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model        = ["a"]
  quantization = ["f16", "q4_K_M"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
}
decision "ok" {
  objective   = maximize(result.output_tok_s)
  constraints = [result.memory_gb <= var.max_gb, 95 <= result.slo_attainment_pct]
  cells       = ["m/a/*"]
}
decision "verb" {
  objective = biggest(result.output_tok_s) # ERROR: Invalid objective ~ maximize(result.<figure>)
}
decision "typo" {
  objective = minimize(result.ttft_p99) # ERROR: Unknown figure ~ Did you mean "ttft_p99_s"?
}
decision "text" {
  objective = maximize(result.model) # ERROR: Unknown figure ~ is text
}
decision "two" {
  objective = maximize(result.output_tok_s, result.goodput_tok_s) # ERROR: Invalid objective
}
decision "constraints" {
  objective = maximize(result.output_tok_s)
  constraints = [
    result.memory_gb <= 8,
    result.memory_gb == 8, # ERROR: Invalid constraint ~ by <=, <, >= or >
    result.memory_gb <= 8 && result.error_rate < 0.01, # ERROR: Invalid constraint ~ write two constraints
    result.memory_gb <= "eight", # ERROR: Invalid constraint ~ must be a number
    result.output_tok_s >= result.goodput_tok_s, # ERROR: Invalid constraint ~ not another result.* figure
    result.same_top_1_pct >= 95, # ERROR: Unknown figure
  ]
}
decision "not-a-list" {
  objective   = maximize(result.output_tok_s)
  constraints = result.memory_gb <= 8 # ERROR: Invalid constraints
}
decision "glob" {
  objective = maximize(result.output_tok_s)
  cells     = ["m/b/*"] # ERROR: Cells match nothing
}
decision "missing" { # ERROR: Missing required argument
}
decision "ok" { # ERROR: Duplicate decision block
  objective = maximize(result.output_tok_s)
}

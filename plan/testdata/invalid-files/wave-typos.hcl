# A misspelt argument in a decision block or a workload's tool block names the block it
# is in, as every other body's does, not HCL's bare "not expected here".
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
workload "w" {
  requests = 8
  tool "read_file" {
    description = "Read a file"
    parameter   = { type = "object" } # ERROR: Unsupported argument ~ An argument named "parameter" is not expected in a workload's tool block. Did you mean "parameters"?
  }
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}
decision "d" {
  objective  = maximize(result.output_tok_s)
  constrains = [result.error_rate <= 0] # ERROR: Unsupported argument ~ An argument named "constrains" is not expected in a decision block. Did you mean "constraints"?
}
decision "e" {
  objective = maximise(result.output_tok_s) # ERROR: Invalid objective ~ Did you mean "maximize"?
}

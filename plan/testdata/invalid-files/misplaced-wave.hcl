# This wave's blocks written one level off, as a user who read the docs in a hurry does:
# each is told where it belongs, not a near argument of the body it is in (an agent
# block in a workload is no misspelt "agents").
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
hardware "h" {
  gpu = "H100"
}
workload "w" {
  tool "read_file" {
    parameters = { type = "object" }
  }
  session {
    turns = 2
  }
  agent { # ERROR: Misplaced block ~ An agent block belongs in a workload's session block, not in a workload block.
    max_steps = 4
  }
  power { # ERROR: Misplaced block ~ A power block belongs in a hardware block, not in a workload block.
    source = "nvml"
  }
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  hardware = [hardware.h]
  workload = [workload.w]
  decision "best" { # ERROR: Misplaced block ~ A decision block belongs at the top level of the plan, not in a matrix block.
    objective = maximize(result.output_tok_s)
  }
}

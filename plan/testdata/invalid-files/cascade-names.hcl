# A misspelt required argument is the one mistake, not also "missing" the name it
# meant; an slo whose only limit is misspelt is not also "empty", nor its capacity
# search "without an slo"; a block with an invalid name is one error, and the
# references and globs that name it as written are not more.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "lab.v" { # ERROR: Invalid name
  url = "http://127.0.0.1:8001/v1"
}
dataset "d" {
  fromat = "jsonl" # ERROR: Unsupported argument ~ Did you mean "format"?
  path   = "../../../examples/data/trace.jsonl"
}
workload "long.prompts" { # ERROR: Invalid name
  prompt_tokens = 512
}
workload "talk" {
  session {
    turn = 3 # ERROR: Unsupported argument ~ Did you mean "turns"?
  }
}
workload "searched" {
  concurrency = [1, 2, 4]
  slo {
    ttft_p99_limit = 1 # ERROR: Unsupported argument
  }
  capacity {
    target_attainment_pct = 90
  }
}
matrix "chat" {
  modle    = ["m"] # ERROR: Unsupported argument ~ Did you mean "model"?
  tool     = [backend.openai.v, backend.openai.lab.v]
  workload = [workload.long.prompts, workload.talk, workload.searched]
}
matrix "two words" { # ERROR: Invalid name
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.talk]
}
expect "named" {
  cells     = ["two words/*"]
  condition = result.error_rate == 0
}

# One misspelt name is one error, on its line: nothing that only follows from the name
# being absent (a goal on a figure it gives, a check across blocks) is said beside it.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "e" {
  url = "http://127.0.0.1:8001/v1"
  api = "embedding" # ERROR: Invalid api ~ Did you mean "embeddings"?
}
dataset "trace" {
  format = "mooncake"
  path   = "../../../examples/data/trace.jsonl"
}
workload "lengths" {
  datset        = dataset.trace # ERROR: Unsupported argument ~ Did you mean "dataset"?
  prompt_tokens = "dataset"
  max_tokens    = "dataset"
}
workload "open" {
  request_rat = [1, 2, 4] # ERROR: Unsupported argument ~ Did you mean "request_rate"?
  arrival     = "constant"
  goal        = result.send_lag_p99_ms < 5
}
workload "talk" {
  sesion { # ERROR: Unsupported block type ~ Did you mean "session"?
    turns = 3
  }
  goal = result.turns_not_sent == 0
}
workload "prefixed" {
  prompt_tokens = unifrom(100, 900) # ERROR: Call to unknown function ~ Did you mean "uniform"?
  prefix {
    tokens = 64
  }
}
workload "vectors" {
  embedings { # ERROR: Unsupported block type ~ Did you mean "embeddings"?
    inputs = [1, 8]
  }
}
workload "searched" {
  concurrency = [1, 2, 4]
  slo {
    ttft = 1 # ERROR: Unsupported argument ~ Did you mean "ttft_s"?
  }
  capacity {
    target_attainment_pct = 95
  }
}
workload "embed" {
  embeddings {
    inputs = [1]
  }
}
matrix "gen" {
  model    = ["a"]
  tool     = [backend.openai.v]
  workload = [workload.lengths, workload.open, workload.talk, workload.prefixed, workload.searched]
}
matrix "emb" {
  model    = ["bge"]
  tool     = [backend.openai.e, backend.openai.v]
  workload = [workload.vectors, workload.embed]
  exclude {
    tool     = backend.openai.v
    workload = workload.vectors
  }
  exclude {
    tool     = backend.openai.v
    workload = workload.embed
  }
}
expect "paced" {
  cells     = ["gen/*/open"]
  condition = result.rate_delivered_per_s > 0
}

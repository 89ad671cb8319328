dataset "trace" {
  format = "mooncake"
  path   = "../../../examples/data/trace.jsonl"
}
dataset "prompts" {
  format = "jsonl"
  path   = "../../../examples/data/prompts.jsonl"
}
workload "not_a_trace" {
  dataset = dataset.prompts # ERROR: Replay needs a trace ~ dataset "prompts" has format = "jsonl"
  replay {
  }
}
workload "bad_window" {
  dataset = dataset.trace
  replay {
    speedup  = 0 # ERROR: Invalid speedup
    start    = "-1s" # ERROR: Invalid duration
    duration = "0s" # ERROR: Empty replay window
  }
}
workload "conflicts" {
  dataset       = dataset.trace
  request_rate  = 5 # ERROR: Conflicting arguments
  prompt_tokens = 128 # ERROR: Conflicting arguments
  replay {
    speedup = 2
  }
}
workload "no_dataset" {
  replay { # ERROR: Replay needs a trace
  }
}
dataset "broken" {
  format = "mooncake"
  path   = "nowhere.jsonl" # ERROR: Cannot read dataset
}
workload "broken_trace" {
  dataset = dataset.broken
  replay {
  }
}
workload "replayed_sessions" {
  dataset = dataset.trace
  session {
    turns = 2
  }
  replay { # ERROR: Conflicting blocks
  }
}
workload "replayed_prefix" {
  dataset = dataset.trace
  prefix {
    tokens = 8
  }
  replay { # ERROR: Conflicting blocks
  }
}
workload "replayed_shared" {
  dataset       = dataset.trace
  shared_prefix = true # ERROR: Conflicting arguments
  replay {
  }
}

dataset "a" {
  format = "csv" # ERROR: Unknown dataset format
  path   = "nowhere.jsonl" # ERROR: Cannot read dataset
}
dataset "b" {
  format           = "text"
  path             = "datasets.hcl"
  prompt_words     = 0 # ERROR: Invalid prompt_words
  min_prompt_words = 9
  max_prompt_words = 3 # ERROR: Invalid max_prompt_words
}
workload "w" {
  dataset       = dataset.c # ERROR: Reference to undeclared dataset
  prompt_tokens = uniform(10, 5) # ERROR: Invalid prompt_tokens
  max_tokens    = normal(10, -1, 1, 20) # ERROR: Invalid max_tokens
}
workload "t" {
  prompt        = "fixed"
  prompt_tokens = uniform(1, 9) # ERROR: Conflicting arguments
}
workload "u" {
  stream = false
  slo {
    ttft_s = 1 # ERROR: Unmeasurable SLO ~ stream = false
  }
}
workload "v" {
  prompt_tokens = "dataset" # ERROR: Invalid prompt_tokens
  max_tokens    = lognormal(1, 1, 0, 5) # ERROR: Invalid max_tokens
}
dataset "m" {
  format     = "mooncake"
  path       = "datasets.hcl"
  block_size = 0 # ERROR: Invalid block_size
}
dataset "n" {
  format     = "text"
  path       = "datasets.hcl"
  block_size = 16 # ERROR: Unexpected block_size
}
workload "p1" {
  prompt_tokens = 100
  prefix {
    tokens = 100 # ERROR: Prefix longer than the prompt
    groups = 0 # ERROR: Invalid prefix groups
  }
}
workload "p2" {
  prompt_tokens = uniform(50, 200)
  prefix {
    tokens = 60 # ERROR: Prefix longer than the prompt
  }
}
workload "p3" {
  prompt = "fixed text"
  prefix { # ERROR: Conflicting arguments
    tokens = 10
  }
}
workload "p4" {
  prefix {
    tokens = 0 # ERROR: Invalid prefix tokens
  }
  prefix { # ERROR: Duplicate prefix block
    tokens = 10
  }
}

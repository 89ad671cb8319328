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
  stream = false # ERROR: Unmeasurable SLO
  slo {
    ttft_s = 1
  }
}
workload "v" {
  prompt_tokens = "dataset" # ERROR: Invalid prompt_tokens
  max_tokens    = lognormal(1, 1, 0, 5) # ERROR: Invalid max_tokens
}

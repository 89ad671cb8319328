# A precision target on a figure the workload never has would make every run send until
# its cap: refused on the target, naming what rules the figure out.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "e" {
  url = "http://127.0.0.1:8001/v1"
  api = "embeddings"
}
workload "whole" {
  stream = false
  precision {
    ttft_p50     = "5%" # ERROR: Unmeasurable precision ~ it sets stream = false
    e2e_p50      = "5%"
    max_requests = 500
  }
}
workload "one_token" {
  max_tokens = 1
  precision {
    tpot_p99     = "5%" # ERROR: Unmeasurable precision ~ one output token leaves no gap to time
    ttft_p99     = "5%"
    max_duration = "2m"
  }
}
workload "vectors" {
  embeddings {
    inputs = [1, 8]
  }
  precision {
    itl_mean     = "3%" # ERROR: Unmeasurable precision ~ it has an embeddings block
    max_requests = 100
  }
}
matrix "gen" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.whole, workload.one_token]
}
matrix "emb" {
  model    = ["m"]
  tool     = [backend.openai.e]
  workload = [workload.vectors]
}

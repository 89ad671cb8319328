# An expect over a figure one of its workloads never has is accepted when the condition
# handles the null itself (coalesce, try, can, or a comparison with null).
backend "openai" "gen" {
  url = "http://127.0.0.1:8000/v1"
}

backend "openai" "embed" {
  url = "http://127.0.0.1:8000/v1"
  api = "embeddings"
}

workload "paced" {
  max_tokens   = 4
  request_rate = [5]
}

workload "embed" {
  embeddings {
    inputs = [1]
  }
}

matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.gen]
  workload = [workload.paced]
}

matrix "e" {
  model    = ["tiny"]
  tool     = [backend.openai.embed]
  workload = [workload.embed]
}

expect "rates" {
  condition     = coalesce(result.rate_scheduled_per_s, 0) < 8 && (result.ttft_p50_s == null || result.ttft_p50_s < 1)
  error_message = "too fast"
}

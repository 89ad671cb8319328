# How sure is a figure: every figure carries its 95% confidence interval, and a
# precision block keeps a level sending until the figures it names are as precise as
# asked. "fixed" sends 100 requests and reports how wide its intervals came out;
# "precise" keeps sending until its median TTFT and TPOT are within ±2%, or 3000
# requests (or two minutes) have been sent, and its row's notes say which.
#
#   planrun mock-server -jitter 20ms &      # TTFT and every token gap ± up to 20 ms
#   planrun apply examples/precision.hcl
#
# The Markdown table shows each figure as "0.201 s ±0.4%"; results.csv has the
# intervals as ttft_p50_s_lo / ttft_p50_s_hi, ...; docs/uncertainty.md explains them.

variable "url" {
  type        = string
  default     = "http://127.0.0.1:8000/v1"
  description = "An OpenAI-compatible base URL ending in /v1 (the mock's by default)."
}

variable "model" {
  type    = string
  default = "mock"
}

backend "openai" "server" {
  url = var.url
}

workload "fixed" {
  prompt_tokens = 64
  max_tokens    = 16
  concurrency   = 8
  requests      = 100
  warmup_runs   = 1
  repeat_runs   = 1
}

workload "precise" {
  prompt_tokens = 64
  max_tokens    = 16
  concurrency   = 8
  requests      = 100 # the first batch; the run then looks every 100 requests
  warmup_runs   = 1
  repeat_runs   = 1
  precision {
    ttft_p50     = "2%"
    tpot_p50     = "2%"
    max_requests = 3000
    max_duration = "2m"
  }
}

matrix "precision" {
  model    = [var.model]
  tool     = [backend.openai.server]
  workload = [workload.fixed, workload.precise]
}

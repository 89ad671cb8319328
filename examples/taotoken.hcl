# Models bought by the token from the TaoToken gateway: no GPU of ours, so no hardware
# and no VRAM; TTFT, TPOT and throughput as a customer sees them.
# The key comes only from the environment: export TAOTOKEN_API_KEY=...

variable "models" {
  type        = list(string)
  default     = ["qwen2.5-7b-instruct", "qwen2.5-72b-instruct", "deepseek-v3"]
  description = "Model names as the gateway lists them."
  validation {
    condition     = length(var.models) > 0
    error_message = "List at least one model."
  }
}

backend "taotoken" "gateway" {
  api_key_env = "TAOTOKEN_API_KEY"
  timeouts {
    connect     = "10s"
    first_token = "30s"
    total       = "2m"
  }
}

workload "chat" {
  prompt_tokens = 128
  max_tokens    = 256
  concurrency   = [1, 8]
  warmup_runs   = 1
  repeat_runs   = 6
  measure       = ["ttft", "tpot", "throughput"]
  temperature   = 0
}

workload "steady" {
  prompt_tokens = 512
  max_tokens    = 128
  concurrency   = 32
  requests      = 100
  request_rate  = 5
  arrival       = "poisson"
  repeat_runs   = 1
  measure       = ["ttft", "tpot", "throughput"]
}

matrix "gateway" {
  model    = var.models
  tool     = [backend.taotoken.gateway]
  workload = [workload.chat, workload.steady]
  exclude {
    model    = "qwen2.5-72b-instruct"
    workload = workload.steady
  }
}

expect "gateway-healthy" {
  condition     = result.error_rate < 0.01
  error_message = "More than 1% of gateway requests failed."
}

output "csv" {
  path = "results/taotoken.csv"
}

output "markdown" {
  path     = "results/taotoken.md"
  language = "zh"
}

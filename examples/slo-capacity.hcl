# SLOs, goodput and a capacity search: how many requests in flight can one vLLM server
# take while 95% of requests still see their first token within 500 ms and decode at
# 50 ms per token or better? Apply runs 1, 8, 32 and 128 until one misses, then bisects
# to the exact concurrency; each row also gets slo_attainment_pct and goodput.
#
#   planrun apply examples/slo-capacity.hcl -var url=http://127.0.0.1:8000/v1 -var model=my-model

variable "url" {
  type        = string
  default     = "http://127.0.0.1:8000/v1"
  description = "An OpenAI-compatible base URL (vLLM's), ending in /v1."
}

variable "model" {
  type        = string
  default     = "Qwen/Qwen2.5-7B-Instruct"
  description = "The model as the server names it (vLLM: --served-model-name)."
}

backend "openai" "vllm" {
  url = var.url
}

workload "chat" {
  prompt_tokens = 512
  max_tokens    = 256
  concurrency   = [1, 8, 32, 128]
  warmup_runs   = 1
  repeat_runs   = 6
  slo {
    ttft_s  = 0.5
    tpot_ms = 50
  }
  capacity {
    target_attainment_pct = 95
  }
}

matrix "qwen" {
  model    = [var.model]
  tool     = [backend.openai.vllm]
  workload = [workload.chat]
  model_id = var.model
}

expect "goodput" {
  condition     = result.slo_attainment_pct == null || result.concurrency > 1 || result.slo_attainment_pct >= 99
  error_message = "A single request should meet the SLO: the server is too slow for it even unloaded."
}

output "markdown" {
  path        = "results/slo-capacity.md"
  percentiles = [50, 95, 99]
}

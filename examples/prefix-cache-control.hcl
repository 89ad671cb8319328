# The prefix cache measured and controlled: the same prefix-group load three times,
# keeping whatever the server's cache holds, emptying it before each level, and leading
# every prompt of a level with a nonce of its own. Each row's cache_hit_pct (the
# server's own usage: cached_tokens, cache_read_input_tokens) sits beside
# shared_prefix_pct (what the level's requests shared with each other), and its
# prefix_cache column says reset, bust, or warm (a level measured on a cache an earlier
# level warmed; its notes say how that is known). On the mock, whose prefix cache
# costs 50 µs of prefill a word it does not hold:
#
#   planrun mock-server -prefix-cache -prefill-per-token 50us &
#   planrun apply examples/prefix-cache-control.hcl
#
# vLLM serves /reset_prefix_cache only in dev mode (VLLM_SERVER_DEV_MODE=1) and reports
# cached tokens with --enable-prompt-tokens-details; Ollama is reset by reloading the
# model, and reports no cached count.

variable "url" {
  description = "The server's OpenAI-compatible base URL, ending in /v1."
  type        = string
  default     = "http://127.0.0.1:8000/v1"
}

variable "model" {
  type    = string
  default = "mock"
}

backend "openai" "server" { url = var.url }

workload "keep" {
  prompt_tokens = 512
  max_tokens    = 8
  concurrency   = [1, 4]
  requests      = 16
  warmup_runs   = 0
  repeat_runs   = 1
  prefix_cache  = "keep"
  prefix {
    tokens = 384
    groups = 4
  }
}

workload "reset" {
  prompt_tokens = 512
  max_tokens    = 8
  concurrency   = [1, 4]
  requests      = 16
  warmup_runs   = 0
  repeat_runs   = 1
  prefix_cache  = "reset"
  prefix {
    tokens = 384
    groups = 4
  }
}

workload "bust" {
  prompt_tokens = 512
  max_tokens    = 8
  concurrency   = [1, 4]
  requests      = 16
  warmup_runs   = 0
  repeat_runs   = 1
  prefix_cache  = "bust"
  prefix {
    tokens = 384
    groups = 4
  }
}

matrix "cache" {
  model    = [var.model]
  tool     = [backend.openai.server]
  workload = [workload.keep, workload.reset, workload.bust]
  model_id = matrix.model
}

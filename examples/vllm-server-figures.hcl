# planrun's figures beside vLLM's own, on the tiny checkpoint and vLLM's CPU build: the
# prefix-cache benefit on TTFT (the same load with and without prefix groups) and planrun's
# TTFT / TPOT / E2E against vLLM's server-side histograms at concurrency 1 and 16 (each row's
# server_ttft_mean_s, server_tpot_mean_ms, server_e2e_mean_s and prefix_cache_hit_pct, from
# vLLM's /metrics over the measured window). Start one vLLM, then apply:
#
#   go run ./tools/tinymodel -hf -o /tmp/tiny-hf
#   VLLM_PIN=1 .tools/bin/vllm-serve --model /tmp/tiny-hf --served-model-name tiny --host 127.0.0.1 \
#     --port 8000 --max-model-len 512 --enable-prefix-caching &
#   planrun apply examples/vllm-server-figures.hcl -var url=http://127.0.0.1:8000/v1
#
# The prompts fit the 512-token context; warm-up runs are discarded, so the first request's
# graph compile is not measured.

variable "url" {
  type        = string
  default     = "http://127.0.0.1:8000/v1"
  description = "The vLLM's OpenAI-compatible base URL, ending in /v1."
}

variable "model" {
  type    = string
  default = "tiny"
}

backend "openai" "chat" {
  url               = var.url
  engine_extensions = true # ignore_eos / min_tokens: every request generates exactly max_tokens
}

backend "openai" "completions" {
  url               = var.url
  api               = "completions" # no chat template: the prompt is exactly what planrun built
  engine_extensions = true
}

# Requests n, n+4, n+8, ... of a run share one 352-token prefix: 4 groups, so after the first
# request of a group vLLM's prefix cache can serve 352 of its 448 prompt tokens. 448, not 480:
# a grouped prompt can come out ~20 tokens longer than asked, and 480 + 21 + 16 output tokens
# would pass the 512-token context (vLLM then answers 400, min_tokens past max_tokens).
workload "grouped" {
  prompt_tokens = 448
  max_tokens    = 16
  concurrency   = 4
  requests      = 32
  warmup_runs   = 1
  repeat_runs   = 2
  temperature   = 0
  seed          = 1
  prefix {
    tokens = 352
    groups = 4
  }
}

# The same load, each prompt unique from its first token: the baseline.
workload "plain" {
  prompt_tokens = 448
  max_tokens    = 16
  concurrency   = 4
  requests      = 32
  warmup_runs   = 1
  repeat_runs   = 2
  temperature   = 0
  seed          = 1
}

# planrun against the server's own figures, greedy so every token decodes to text at once.
workload "levels" {
  prompt_tokens = 128
  max_tokens    = 32
  concurrency   = [1, 16]
  requests      = 64
  warmup_runs   = 1
  repeat_runs   = 1
  temperature   = 0
  seed          = 3
}

matrix "prefix" {
  model    = [var.model]
  tool     = [backend.openai.chat]
  workload = [workload.grouped, workload.plain]
  model_id = var.model
}

matrix "server" {
  model    = [var.model]
  tool     = [backend.openai.completions]
  workload = [workload.levels]
  model_id = var.model
}

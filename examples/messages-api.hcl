# The Anthropic Messages API (POST /v1/messages) measured on the same timing core as
# every other protocol: TTFT at the first delta of any kind (thinking, text or a tool
# call's input), TTFO at the first non-thinking output, ITL over the deltas, and the
# server's own usage (output_tokens, input_tokens, cache_read_input_tokens).
# Ollama 0.17.4 serves it at /v1/messages, vLLM 0.32 beside its OpenAI routes; on the mock:
#
#   planrun mock-server -ttft 200ms -tpot 10ms -reasoning-tokens 8 &
#   planrun apply examples/messages-api.hcl
#
# Anthropic's own API: -var url=https://api.anthropic.com/v1 with api_key_env below
# (ANTHROPIC_API_KEY exported; the key goes in x-api-key, never in the plan).

variable "url" {
  description = "The Messages API server's base URL, ending in /v1 (planrun adds /messages)."
  type        = string
  default     = "http://127.0.0.1:8000/v1"
}

variable "model" {
  description = "The model as the server names it."
  type        = string
  default     = "mock"
}

backend "anthropic" "server" {
  url = var.url
  # api_key_env    = "ANTHROPIC_API_KEY" # the key, read from the environment
  # api_key_header = "bearer"            # vLLM's --api-key checks Authorization: Bearer
}

workload "chat" {
  prompt_tokens = 64
  max_tokens    = 48 # the Messages API requires max_tokens: 4096 when a workload sets none
  concurrency   = [1, 4]
  requests      = 16
  warmup_runs   = 1
  repeat_runs   = 2
  think         = true # thinking { type = "enabled" }: a thinking block before the text
}

matrix "messages" {
  model    = [var.model]
  tool     = [backend.anthropic.server]
  workload = [workload.chat]
  model_id = matrix.model
}

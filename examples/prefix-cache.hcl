# Shared prefixes against a prefix-caching server (vLLM with --enable-prefix-caching,
# SGLang): the same load with and without prefix groups, and a Mooncake trace whose
# hash_ids share blocks. Each row's shared_prefix_pct, beside TTFT, says how much of the
# prompts a cache could reuse. examples/data/prefix-trace.jsonl holds six hand-written
# Mooncake rows whose hash_ids share leading blocks.
#
#   planrun apply examples/prefix-cache.hcl -var url=http://127.0.0.1:8000/v1 -var model=my-model

variable "url" {
  description = "The prefix-caching server's OpenAI-compatible base URL, ending in /v1."
  type        = string
  default     = "http://127.0.0.1:8000/v1"
}

variable "model" {
  description = "The model as the server names it (vLLM: --served-model-name)."
  type        = string
  default     = "tiny"
}

variable "force_output" {
  type        = bool
  default     = true
  description = "Send vLLM/SGLang's ignore_eos and min_tokens, so every request generates exactly its output length; false for a server that rejects request fields it does not know."
}

backend "openai" "server" {
  url               = var.url
  engine_extensions = var.force_output # ignore_eos / min_tokens: outputs of their exact length
}

dataset "trace" {
  format     = "mooncake"
  path       = "data/prefix-trace.jsonl" # relative to this plan
  block_size = 512                       # tokens per hash id, as in Mooncake's traces
}

# Requests n, n+4, n+8, ... of a run share one 768-token prefix: 4 groups.
workload "grouped" {
  prompt_tokens = 1024 # the whole prompt, the prefix included
  max_tokens    = 16
  concurrency   = 4
  requests      = 32
  warmup_runs   = 1
  repeat_runs   = 2
  seed          = 1
  prefix {
    tokens = 768
    groups = 4
  }
}

# The same load, each prompt unique from its first token: the baseline.
workload "plain" {
  prompt_tokens = 1024
  max_tokens    = 16
  concurrency   = 4
  requests      = 32
  warmup_runs   = 1
  repeat_runs   = 2
  seed          = 1
}

workload "trace" {
  dataset       = dataset.trace
  prompt_tokens = "dataset" # input_length, built from one shared block per hash id
  max_tokens    = "dataset"
  concurrency   = 2
  requests      = 12
  warmup_runs   = 0
  repeat_runs   = 1
}

matrix "prefixes" {
  model    = [var.model]
  tool     = [backend.openai.server]
  workload = [workload.grouped, workload.plain, workload.trace]
  model_id = var.model
}

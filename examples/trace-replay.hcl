# Replay a Mooncake trace against an OpenAI-compatible server: every row is sent at its
# own timestamp (open loop), with its own prompt length (built to the server's own token
# count) and output length (forced where the server allows). The first 30 s of trace
# time are replayed, so the note says where the trace was cut.
# examples/data/trace.jsonl was written by examples/data/generate_trace.go.
#
#   planrun apply examples/trace-replay.hcl -var url=http://127.0.0.1:8000/v1 -var model=my-model

variable "url" {
  type        = string
  default     = "http://127.0.0.1:8000/v1"
  description = "An OpenAI-compatible base URL, ending in /v1."
}

variable "model" {
  type        = string
  default     = "tiny"
  description = "The model name the server knows."
}

variable "trace" {
  type        = string
  default     = "data/trace.jsonl"
  description = "A Mooncake-format trace (JSONL: timestamp in ms, input_length, output_length, hash_ids); relative paths are from this plan."
}

variable "speedup" {
  type        = number
  default     = 1
  description = "How many times faster than recorded the trace is sent."
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
  format = "mooncake"
  path   = var.trace
}

workload "replay" {
  dataset     = dataset.trace
  temperature = 0
  seed        = 7
  # No concurrency: no cap on requests in flight. No warm-up, one measured replay.
  replay {
    speedup  = var.speedup
    start    = "0s"
    duration = "30s" # of trace time
  }
}

matrix "replay" {
  model    = [var.model]
  tool     = [backend.openai.server]
  workload = [workload.replay]
  model_id = var.model
}

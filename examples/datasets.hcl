# Real-looking traffic instead of filler: prompts drawn (seeded) from a JSONL dataset,
# and output lengths drawn from a normal distribution, against an OpenAI-compatible
# server. examples/data/prompts.jsonl was written by examples/data/generate.go.
#
#   planrun apply examples/datasets.hcl -var url=http://127.0.0.1:8000/v1 -var model=my-model

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

variable "force_output" {
  type        = bool
  default     = true
  description = "Send vLLM/SGLang's ignore_eos and min_tokens, so every request generates exactly its output length; false for a server that rejects request fields it does not know."
}

backend "openai" "server" {
  url               = var.url
  engine_extensions = var.force_output # ignore_eos / min_tokens: outputs of their exact length
}

dataset "questions" {
  format              = "jsonl"
  path                = "data/prompts.jsonl" # relative to this plan
  prompt_field        = "prompt"
  output_tokens_field = "output_tokens"
  min_prompt_words    = 4
}

workload "mixed" {
  dataset       = dataset.questions
  prompt_tokens = "dataset"               # each request's prompt is its row's text
  max_tokens    = normal(64, 16, 16, 128) # drawn per request, forced where the server allows
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 2
  requests      = 16
  temperature   = 0
  seed          = 7
}

matrix "datasets" {
  model    = [var.model]
  tool     = [backend.openai.server]
  workload = [workload.mixed]
  model_id = var.model
}

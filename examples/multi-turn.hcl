# Multi-turn conversations against an OpenAI-compatible chat server: each session is
# 4 turns; turn k sends the whole conversation so far (every earlier prompt and the
# server's own answer) plus its own prompt, so TTFT and prompt tokens grow turn by turn.
# Sessions are the unit of concurrency: concurrency = sessions in flight, and a run sends
# sessions × turns requests. The report has a per-turn and a per-session table.
#
#   planrun apply examples/multi-turn.hcl -var url=http://127.0.0.1:8000/v1 -var model=my-model

variable "url" {
  type        = string
  default     = "http://127.0.0.1:8000/v1"
  description = "The chat server's OpenAI-compatible base URL, ending in /v1."
}

variable "model" {
  type        = string
  default     = "tiny"
  description = "The model the sessions talk to, as the server names it."
}

variable "force_output" {
  type        = bool
  default     = true
  description = "Send vLLM/SGLang's ignore_eos and min_tokens, so every request generates exactly its output length; false for a server that rejects request fields it does not know."
}

backend "openai" "server" {
  url               = var.url          # api = "chat" (the default): a completions endpoint cannot carry a history
  engine_extensions = var.force_output # ignore_eos / min_tokens: outputs of their exact length
}

workload "chat" {
  prompt_tokens = 64 # each turn's own new message
  max_tokens    = 32 # each answer, forced where the server allows
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 2
  temperature   = 0
  seed          = 11

  session {
    turns      = 4
    think_time = "100ms" # pause between an answer and the next turn
    sessions   = 8       # per run; leave out for one per concurrency slot
  }
}

matrix "multi-turn" {
  model    = [var.model]
  tool     = [backend.openai.server]
  workload = [workload.chat]
  model_id = var.model
}

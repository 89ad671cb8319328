# planrun's side of scripts/peers.sh: the same workload the peer clients run, against the one
# vLLM the script started (var.url). No server block: the script owns vLLM, so every client
# hits the same warm process and the /metrics deltas compare like with like.

variable "url" {
  type        = string
  description = "vLLM's base URL, http://127.0.0.1:PORT (the script picks the port)."
}

variable "requests" {
  type    = number
  default = 16
}

variable "concurrency" {
  type        = number
  default     = 1
  description = "One level a run: the script runs one apply per level of PEERS_LEVELS, so each run's /metrics window holds that level only."
}

variable "prompt_tokens" {
  type        = number
  default     = 78
  description = "The server's count of the whole prompt: the peers send 64 tokens of text, which the chat template makes 78 on vLLM's count."
}

backend "openai" "vllm" {
  url               = "${var.url}/v1"
  api               = "chat"
  engine_extensions = true # ignore_eos / min_tokens: exactly max_tokens out, as the peers ask
}

workload "peers" {
  prompt_tokens = var.prompt_tokens
  max_tokens    = 32
  concurrency   = var.concurrency
  requests      = var.requests
  warmup_runs   = 0
  repeat_runs   = 1
  temperature   = 0
  seed          = 42
}

matrix "peers" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  workload = [workload.peers]
  model_id = "tiny"
}

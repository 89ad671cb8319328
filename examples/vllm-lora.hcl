# A multi-LoRA mix on one vLLM: the base model and two LoRA adapters behind one URL, the
# requests spread over the three names by weight (seeded: every run sends the same sequence).
# The row's figures pool all names; the reports' Models table, summary.json's models section
# and the CSV's model_mix column give each name's own. Write the tiny checkpoint and two
# adapters of it, serve them, then apply:
#
#   go run ./tools/tinymodel -hf -o /tmp/tiny-hf
#   go run ./tools/tinymodel -lora -seed 2 -o /tmp/lora-a
#   go run ./tools/tinymodel -lora -seed 3 -o /tmp/lora-b
#   .tools/bin/vllm-serve --model /tmp/tiny-hf --served-model-name tiny --host 127.0.0.1 \
#     --port 8000 --max-model-len 512 --enable-lora \
#     --lora-modules tiny-lora-a=/tmp/lora-a tiny-lora-b=/tmp/lora-b --max-lora-rank 8 --max-loras 2 &
#   planrun apply examples/vllm-lora.hcl -var url=http://127.0.0.1:8000/v1
#
# A name the server does not list (an adapter vLLM was not started with) fails the cell at
# the models line below, before any of its requests is sent.

variable "url" {
  type        = string
  default     = "http://127.0.0.1:8000/v1"
  description = "The vLLM's OpenAI-compatible base URL, ending in /v1."
}

backend "openai" "vllm" {
  url               = var.url
  engine_extensions = true # ignore_eos / min_tokens: every request generates exactly max_tokens
}

workload "lora-mix" {
  prompt_tokens = 64
  max_tokens    = 32
  concurrency   = [1, 4]
  requests      = 40
  warmup_runs   = 1
  repeat_runs   = 2
  temperature   = 0
  seed          = 1
  models        = { "tiny" = 2, "tiny-lora-a" = 1, "tiny-lora-b" = 1 }
}

matrix "lora" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  workload = [workload.lora-mix]
  model_id = "tiny" # the probe and the prompt calibration use the base model
}

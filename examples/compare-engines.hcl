# Ollama against vLLM on the same weights: one tiny Llama checkpoint, written by our own
# seeded code (go run ./tools/tinymodel -hf), served by vLLM's CPU build as it is and by
# Ollama after `ollama create` imports the same safetensors (its converter keeps the bf16
# weights exactly, as F16). Both tokenizers count a text alike. planrun starts each server,
# runs concurrency 1, 4 and 16 on it, stops it, and prints one table. Run it with
# `make compare-engines` (scripts/compare-engines.sh: installs both engines, writes the
# model, picks free ports, checks no process is left); by hand:
#
#   go run ./tools/tinymodel -hf -o $PWD/.tools/compare-engines/model
#   planrun apply examples/compare-engines.hcl -var dir=$PWD/.tools/compare-engines \
#     -var ollama=$PWD/.tools/bin/ollama -var vllm=$PWD/.tools/bin/vllm-serve \
#     -var ollama_port=11600 -var vllm_port=11601
#
# Random weights: the text is noise; the timings are real CPU inference in both engines.

variable "dir" {
  type        = string
  default     = "/tmp/planrun-compare-engines"
  description = "Absolute directory: the checkpoint in dir/model, Ollama's models and HOME, the logs."
}

variable "ollama" {
  type        = string
  default     = "ollama"
  description = "The ollama binary (the script passes the pinned build in .tools/bin)."
}

variable "vllm" {
  type        = string
  default     = "vllm-serve"
  description = "The vLLM starter scripts/install-vllm.sh writes (.tools/bin/vllm-serve)."
}

variable "ollama_port" {
  type    = number
  default = 11600
}

variable "vllm_port" {
  type    = number
  default = 11601
}

locals {
  ollama_host = "127.0.0.1:${var.ollama_port}"
  vllm_url    = "http://127.0.0.1:${var.vllm_port}"
  model       = "${var.dir}/model"
}

server "ollama" {
  command = [var.ollama, "serve"]
  dir     = local.model
  env = {
    OLLAMA_HOST         = local.ollama_host
    OLLAMA_MODELS       = "${var.dir}/ollama-models"
    HOME                = "${var.dir}/home"
    OLLAMA_NUM_PARALLEL = "16" # as many slots as the highest concurrency, like vLLM's batch
  }
  ready {
    url     = "http://${local.ollama_host}/api/version"
    timeout = "60s"
  }
  log = "${var.dir}/ollama.log"
  # FROM . in the Modelfile: the safetensors directory vLLM serves.
  setup = [[var.ollama, "create", "tiny", "-f", "${local.model}/Modelfile"]]
}

server "vllm" {
  command = [var.vllm, "--model", local.model, "--served-model-name", "tiny",
    "--host", "127.0.0.1", "--port", tostring(var.vllm_port),
  "--max-model-len", "512", "--enable-prefix-caching"]
  dir = var.dir
  env = {
    VLLM_CPU_KVCACHE_SPACE = "1" # GiB of KV cache: plenty for 16 x 512 tokens of this model
    # vllm-serve keeps vLLM's engine core on its worker's cores and the API server on the
    # others (scripts/install-vllm.sh): on a small machine, unpinned, the engine core's
    # spinning starves the API server and every response arrives whole (docs/peers.md).
    VLLM_PIN = "1"
  }
  ready {
    url     = "${local.vllm_url}/health"
    timeout = "5m" # loads torch and compiles its graphs: about a minute on 2 cores
  }
  stop_signal = "SIGINT"
  grace       = "30s"
  log         = "${var.dir}/vllm.log"
}

backend "ollama" "ollama" {
  url          = "http://${local.ollama_host}"
  api          = "chat" # both engines render the checkpoint's one chat template: the same tokens
  server       = server.ollama
  ensure_model = "check"
}

backend "openai" "vllm" {
  url               = "${local.vllm_url}/v1"
  server            = server.vllm
  api               = "chat" # the same template as Ollama's (its Modelfile mirrors tokenizer_config.json)
  engine_extensions = true   # ignore_eos / min_tokens: exactly max_tokens out
}

workload "levels" {
  prompt_tokens = 64
  max_tokens    = 32
  concurrency   = [1, 4, 16]
  requests      = 32
  warmup_runs   = 1
  repeat_runs   = 2
  temperature   = 0
  seed          = 42
}

matrix "engines" {
  model    = ["planrun-tiny-hf"]
  tool     = [backend.ollama.ollama, backend.openai.vllm]
  workload = [workload.levels]
  model_id = "tiny"
}

expect "no-errors" {
  condition     = result.error_rate == 0
  error_message = "Some requests failed: see the notes column and the server logs in var.dir."
}

output "csv" {
  path = "../results/compare-engines/results.csv"
}

output "markdown" {
  path = "../results/compare-engines/results.md"
}

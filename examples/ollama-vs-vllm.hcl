# Ollama against vLLM on one RTX 5090: the same models and quantizations through both
# servers, with planrun starting each server itself. vLLM serves one quantization per
# process, so there is one vLLM server per quantization and each cell names its own.
#
# Running it on a GPU box (Linux, NVIDIA driver, `ollama` and `vllm` on PATH, nothing
# else listening on 11434 or 8000, and no other job on the GPU: its memory is measured):
#
#   export VLLM_API_KEY=unused        # sent as Bearer; vLLM checks it only with --api-key
#   planrun validate examples/ollama-vs-vllm.hcl
#   planrun plan examples/ollama-vs-vllm.hcl    # cells, and when each server starts/stops
#   planrun apply examples/ollama-vs-vllm.hcl -var models_dir=$HOME/.ollama/models
#   cat results/<run dir>/report.md               # both servers in one table, with VRAM
#
# - Edit the hardware block (name, gpu, vram_gb) to your card: rows are labelled with it.
# - The first vLLM start downloads the weights from Hugging Face (set HF_HOME, and
#   HF_TOKEN for gated models); ready.timeout allows 10 minutes for that and CUDA graphs.
# - The Ollama server pulls its model in setup; ensure_model = "check" (the default on
#   ollama backends) then confirms it is there and records its digest in manifest.json.
# - Server logs go to logs/ beside this file, results to results/; apply stops every
#   server it started, also on failure and on Ctrl-C.

variable "vllm_port" {
  type        = number
  default     = 8000
  description = "Port the vLLM servers listen on (one at a time)."
}

variable "models_dir" {
  type    = string
  default = "/srv/models"
}

locals {
  vllm_url = "http://127.0.0.1:${var.vllm_port}"
  # The Hugging Face repositories vLLM loads, by model and quantization.
  hf_repo = {
    "qwen2.5-7b" = { awq = "Qwen/Qwen2.5-7B-Instruct-AWQ", fp8 = "Qwen/Qwen2.5-7B-Instruct" }
  }
}

server "ollama" {
  command = ["ollama", "serve"]
  env     = { OLLAMA_HOST = "127.0.0.1:11434", OLLAMA_MODELS = var.models_dir }
  ready {
    url     = "http://127.0.0.1:11434/api/version"
    timeout = "60s"
  }
  log   = "logs/ollama.log"
  setup = [["ollama", "pull", "qwen2.5:7b-instruct-q4_K_M"]]
}

server "vllm_awq" {
  command = "vllm"
  args    = ["serve", local.hf_repo["qwen2.5-7b"].awq, "--quantization", "awq", "--port", tostring(var.vllm_port)]
  ready {
    url     = "${local.vllm_url}/health"
    timeout = "10m"
  }
  stop_signal = "SIGINT"
  grace       = "30s"
  log         = "logs/vllm-awq.log"
}

server "vllm_fp8" {
  command = ["vllm", "serve", local.hf_repo["qwen2.5-7b"].fp8, "--quantization", "fp8", "--port", tostring(var.vllm_port)]
  ready {
    url     = "${local.vllm_url}/health"
    timeout = "10m"
  }
  stop_signal = "SIGINT"
  grace       = "30s"
  log         = "logs/vllm-fp8.log"
}

backend "ollama" "local" {
  url        = "http://127.0.0.1:11434"
  keep_alive = "10m"
  server     = server.ollama
}

backend "openai" "vllm" {
  url               = "${local.vllm_url}/v1"
  api_key_env       = "VLLM_API_KEY"
  engine_extensions = true
  timeouts {
    first_token = "60s"
    total       = "5m"
  }
}

hardware "rtx5090" {
  gpu     = "NVIDIA GeForce RTX 5090"
  vram_gb = 32
}

workload "short" {
  prompt_tokens = 128
  max_tokens    = 256
  concurrency   = [1, 4, 16]
  warmup_runs   = 3
  repeat_runs   = 6
  measure       = ["ttft", "tpot", "throughput", "vram"]
  temperature   = 0
  seed          = 42
}

matrix "qwen" {
  model        = ["qwen2.5-7b"]
  quantization = ["q4_K_M", "awq", "fp8"]
  tool         = [backend.ollama.local, backend.openai.vllm]
  hardware     = [hardware.rtx5090]
  workload     = [workload.short]

  # Ollama serves GGUF (q4_K_M); vLLM serves AWQ and FP8.
  exclude {
    tool         = backend.ollama.local
    quantization = ["awq", "fp8"]
  }
  exclude {
    tool         = backend.openai.vllm
    quantization = "q4_K_M"
  }

  # The name each server knows the model by.
  model_id = (matrix.tool.kind == "ollama"
    ? "qwen2.5:7b-instruct-${lower(matrix.quantization)}"
  : local.hf_repo[matrix.model][matrix.quantization])

  # One vLLM process per quantization; Ollama's cells use the backend's server.
  server = matrix.tool.kind == "openai" ? server["vllm_${matrix.quantization}"] : server.ollama
}

# The seed's one published range for this card is for Qwen2.5-14B fp8 (TTFT 0.2-0.4 s,
# 80-100 tok/s). This plan measures 7B, which has none, so it declares no reference: one
# that matches no cell holds nothing (validate warns about it). Measuring 14B too, add
#   reference "rtx5090-14b-fp8" {
#     match        = { hardware = "rtx5090", model = "qwen2.5-14b", quantization = "fp8" }
#     ttft_s       = [0.2, 0.4]
#     output_tok_s = [80, 100]
#   }

expect "no-errors" {
  condition     = result.error_rate == 0
  error_message = "Some requests failed."
}

expect "ttft-single" {
  condition     = result.concurrency > 1 || result.ttft_p50_s < 1.0
  error_message = "Single-request TTFT above one second."
}

output "csv" {
  path = "results/ollama-vs-vllm.csv"
}

output "markdown" {
  path = "results/ollama-vs-vllm.md"
}

output "jsonl" {
  path = "results/ollama-vs-vllm.jsonl"
}

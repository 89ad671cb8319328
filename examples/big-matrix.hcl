# A large sweep: four model sizes × four quantizations × three servers × three GPUs ×
# two workloads, trimmed by exclude blocks to what each server and card can run.
# Use `planrun plan -only 'sweep/qwen2.5-7b/*'` to run a slice.

variable "models" {
  type    = list(string)
  default = ["qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b"]
}

locals {
  # Ollama's tag for each quantization; vLLM takes the Hugging Face repository.
  ollama_tag = { q4_K_M = "q4_K_M", q8_0 = "q8_0", fp16 = "fp16" }
}

backend "ollama" "local" {}

backend "openai" "vllm" {
  url               = "http://127.0.0.1:8000/v1"
  engine_extensions = true
}

backend "openai" "sglang" {
  url = "http://127.0.0.1:30000/v1"
}

hardware "rtx4060" {
  gpu     = "NVIDIA GeForce RTX 4060"
  vram_gb = 8
}

hardware "rtx5090" {
  gpu     = "NVIDIA GeForce RTX 5090"
  vram_gb = 32
}

hardware "h200" {
  gpu     = "NVIDIA H200"
  vram_gb = 141
}

workload "short" {
  concurrency = [1, 4, 16]
  repeat_runs = 6 # 6 requests at c=1: the fewest that bound a median at 95%
}

workload "long" {
  prompt_tokens = 4096
  max_tokens    = 512
  concurrency   = [1, 8]
  repeat_runs   = 6
}

matrix "sweep" {
  model        = var.models
  quantization = ["q4_K_M", "q8_0", "fp16", "fp8"]
  tool         = [backend.ollama.local, backend.openai.vllm, backend.openai.sglang]
  hardware     = [hardware.rtx4060, hardware.rtx5090, hardware.h200]
  workload     = [workload.short, workload.long]

  # GGUF quantizations are Ollama's; fp8 is vLLM's and SGLang's.
  exclude {
    tool         = [backend.openai.vllm, backend.openai.sglang]
    quantization = ["q4_K_M", "q8_0"]
  }
  exclude {
    tool         = backend.ollama.local
    quantization = "fp8"
  }
  # An 8 GB card holds neither the large models nor fp16 weights.
  exclude {
    hardware = hardware.rtx4060
    model    = ["qwen2.5-14b", "qwen2.5-32b"]
  }
  exclude {
    hardware     = hardware.rtx4060
    quantization = "fp16"
  }
  # Long prompts only on the H200.
  exclude {
    workload = workload.long
    hardware = [hardware.rtx4060, hardware.rtx5090]
  }
  # The 72B model is only tried on the H200 with vLLM.
  include {
    model        = "qwen2.5-72b"
    quantization = "fp8"
    tool         = backend.openai.vllm
    hardware     = hardware.h200
    workload     = workload.short
  }

  model_id = (matrix.tool.kind == "ollama"
    ? "${replace(matrix.model, "qwen2.5-", "qwen2.5:")}-instruct-${local.ollama_tag[matrix.quantization]}"
  : "Qwen/Qwen2.5-${upper(trimprefix(matrix.model, "qwen2.5-"))}-Instruct")
}

output "csv" {
  path = "results/sweep.csv"
}

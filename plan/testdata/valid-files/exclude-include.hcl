backend "ollama" "local" {}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
hardware "rtx4060" {
  gpu     = "NVIDIA GeForce RTX 4060"
  vram_gb = 8
}
hardware "rtx5090" {
  gpu     = "NVIDIA GeForce RTX 5090"
  vram_gb = 32
}
workload "short" {
  concurrency = [1, 4, 16]
}

matrix "qwen" {
  model        = ["qwen2.5-7b", "qwen2.5-14b"]
  quantization = ["q4_K_M", "fp8"]
  tool         = [backend.ollama.local, backend.openai.vllm]
  hardware     = [hardware.rtx4060, hardware.rtx5090]
  workload     = [workload.short]
  exclude {
    tool         = backend.ollama.local
    quantization = "fp8"
  }
  exclude {
    tool         = "openai.vllm"
    quantization = "q4_K_M"
  }
  exclude {
    hardware = hardware.rtx4060
    model    = "qwen2.5-14b"
  }
  include {
    model        = "qwen2.5-32b"
    quantization = "fp8"
    tool         = backend.openai.vllm
    hardware     = hardware.rtx5090
    model_id     = "Qwen/Qwen2.5-32B-Instruct-FP8"
  }
  model_id = matrix.tool.kind == "ollama" ? "${replace(matrix.model, "-", ":")}-${matrix.quantization}" : upper(matrix.model)
  notes    = "${matrix.hardware.gpu}, ${matrix.workload.max_tokens} tokens"
}

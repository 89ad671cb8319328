# Two GPU boxes on the network: Ollama on one, vLLM on the other, measured from this
# machine. One url expression follows each cell's hardware host, and each host's DCGM
# exporter gives its GPU memory, utilisation and power (planrun cannot reach their NVML),
# and its process exporter the server's own memory (planrun cannot read their /proc).
#
#   planrun apply examples/remote-hosts.hcl -var ollama_host=gpu1.lab -var vllm_host=gpu2.lab
#
# On each host: the server listening on the network, NVIDIA's dcgm-exporter
# (docker run --gpus all -p 9400:9400 nvcr.io/nvidia/k8s/dcgm-exporter), and
# planrun process-exporter -match 'ollama serve' (on gpu1; -match 'vllm serve' on gpu2).

variable "ollama_host" {
  type        = string
  default     = "gpu1.lab"
  description = "The RTX 4060 box that serves Ollama on port 11434."
}

variable "vllm_host" {
  type        = string
  default     = "gpu2.lab"
  description = "The RTX 5090 box that serves vLLM on port 8000."
}

hardware "rtx4060" {
  gpu     = "NVIDIA GeForce RTX 4060"
  vram_gb = 8
  host    = var.ollama_host
  telemetry {
    dcgm    = "http://${var.ollama_host}:9400/metrics"
    process = "http://${var.ollama_host}:9256/metrics"
  }
}

hardware "rtx5090" {
  gpu     = "NVIDIA GeForce RTX 5090"
  vram_gb = 32
  host    = var.vllm_host
  telemetry {
    dcgm    = "http://${var.vllm_host}:9400/metrics"
    process = "http://${var.vllm_host}:9256/metrics"
  }
}

backend "ollama" "native" {
  url = "http://127.0.0.1:11434"
}

backend "openai" "vllm" {
  url         = "http://127.0.0.1:8000/v1"
  api_key_env = "VLLM_API_KEY"
}

workload "short" {
  prompt_tokens = 128
  max_tokens    = 256
  concurrency   = [1, 4]
  warmup_runs   = 2
  repeat_runs   = 6
}

matrix "remote" {
  model    = ["qwen2.5-7b"]
  tool     = [backend.ollama.native, backend.openai.vllm]
  hardware = [hardware.rtx4060, hardware.rtx5090]
  workload = [workload.short]
  # Ollama lives on the 4060 box and vLLM on the 5090 box.
  exclude {
    tool     = backend.ollama.native
    hardware = hardware.rtx5090
  }
  exclude {
    tool     = backend.openai.vllm
    hardware = hardware.rtx4060
  }
  model_id = matrix.tool.kind == "ollama" ? "qwen2.5:7b" : "Qwen/Qwen2.5-7B-Instruct"
  # The same backend blocks serve whichever host the cell's hardware names.
  url = matrix.tool.kind == "ollama" ? "http://${matrix.hardware.host}:11434" : "http://${matrix.hardware.host}:8000/v1"
}

output "csv" {
  path = "../results/remote-hosts/results.csv"
}

output "markdown" {
  path = "../results/remote-hosts/results.md"
}

# The GPU check of issue 6: planrun against ../shared/gpu/openai_gpu_server.py on the
# device machine (see prepare.sh). Small on purpose: a few minutes of device time.
backend "openai" "gpu" {
  url = "http://127.0.0.1:8000/v1"
}

hardware "h200" {
  gpu     = "NVIDIA H200"
  vram_gb = 141
  # Energy per token through NVML's total-energy counter (issue 51): energy_source must
  # say "total energy, energy counter" on a Volta or later card.
  power {
    source = "nvml"
  }
}

workload "check" {
  prompt_tokens = 64
  max_tokens    = 64
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 4
}

matrix "gpu" {
  model    = ["tiny-gpu-llama"]
  tool     = [backend.openai.gpu]
  hardware = [hardware.h200]
  workload = [workload.check]
}

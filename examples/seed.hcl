# Converted by `planrun convert` from the seed benchmark config skeleton (config.toml).
# Run it with: planrun apply <this file>

# [server] api_base is the base the seed's script appends /v1/chat/completions to,
# so the backend's base URL is api_base + "/v1". The seed's host = 0.0.0.0 and port = 8000
# are where its own server listens; api_base is what the requests go to.
backend "taotoken" "gateway" {
  url = "https://taotoken.net/api/v1"
  # [auth] Read the key from the environment, never hard-code it.
  api_key_env = "TAOTOKEN_API_KEY"
}

hardware "rtx-4060" {
  gpu     = "RTX 4060"
  vram_gb = 8
  driver  = "" # record your driver version
  cuda    = "" # record your CUDA version
}

workload "seed" {
  # The switches for the four core metrics (measure_ttft, measure_tpot, measure_throughput, measure_vram).
  measure = ["ttft", "tpot", "throughput", "vram"]
  # Request parameters must be fixed for results to be reproducible.
  prompt_tokens = 128 # fixed input length
  max_tokens    = 256 # fixed output length
  concurrency   = 1   # concurrent requests; 1 for single requests
  warmup_runs   = 3   # warm-up runs, discarded
  repeat_runs   = 5   # measured runs; the median is reported
}

matrix "seed" {
  model        = ["qwen2.5-7b-instruct"]
  quantization = ["q4_k_m"] # e.g. q4_k_m, fp8, fp16
  tool         = [backend.taotoken.gateway]
  hardware     = [hardware.rtx-4060]
  workload     = [workload.seed]
  # [model] max_model_len is a server setting; the KV cache (and so VRAM) grows with it.
  notes = "max_model_len 8192"
}

output "csv" {
  path = "results/results.csv"
}

output "markdown" {
  path = "results/results.md"
}

# Every placement: this machine, a remote host, Slurm partitions (one job per hardware
# block, and one per cell), with DCGM and process-exporter telemetry; the url follows the cell's host.
variable "partition" { default = "large" }

backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}

hardware "laptop" { gpu = "NVIDIA GeForce RTX 4060" }
hardware "box" {
  gpu  = "NVIDIA GeForce RTX 5090"
  host = "gpu1.lab"
  telemetry {
    dcgm          = "http://gpu1.lab:9400/metrics"
    process       = "http://gpu1.lab:9256/metrics"
    process_group = "vllm"
  }
}
hardware "h200" {
  gpu = "NVIDIA H200"
  slurm {
    partition   = var.partition
    gpus        = 1
    time        = "1:00:00"
    account     = "bench"
    sbatch_args = ["--mem=64G"]
    jobs        = "per_cell"
  }
}
hardware "a100" {
  slurm {
    partition    = "small"
    gres         = "gpu:a100:1"
    constraint   = "a100"
    qos          = "normal"
    planrun_path = "/shared/bin/planrun"
  }
}

workload "w" {
  prompt_tokens = 16
  max_tokens    = 8
}

matrix "m" {
  model    = ["qwen"]
  tool     = [backend.openai.vllm]
  hardware = [hardware.laptop, hardware.box, hardware.h200, hardware.a100]
  workload = [workload.w]
  notes    = "${matrix.hardware.placement} ${matrix.hardware.host} ${matrix.hardware.slurm.partition}"
}

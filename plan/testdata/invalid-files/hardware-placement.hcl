hardware "both" {
  host = "gpu1.lab:11434"
  slurm { # ERROR: Conflicting placement
    partition = "small"
  }
}
hardware "twice" {
  slurm {
    partition = "small"
    gpus      = 1
    gres      = "gpu:1" # ERROR: Conflicting arguments
    jobs      = "per_cel" # ERROR: Invalid jobs
    time      = "2 hours" # ERROR: Invalid time
    nodes     = 2 # ERROR: Unsupported argument
  }
  slurm { # ERROR: Duplicate slurm block
    partition = "large"
  }
  telemetry {
    dcgm = "gpu1.lab:9400" # ERROR: Invalid dcgm URL
  }
}

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
    gres      = "gpu:1"   # ERROR: Conflicting arguments
    jobs      = "per_cel" # ERROR: Invalid jobs
    time      = "2 hours" # ERROR: Invalid time
    nodes     = 2         # ERROR: Unsupported argument
  }
  slurm { # ERROR: Duplicate slurm block
    partition = "large"
  }
  telemetry {
    dcgm    = "gpu1.lab:9400"                       # ERROR: Invalid dcgm URL
    process = "http://http://gpu1.lab:9256/metrics" # ERROR: Invalid process URL
  }
}
hardware "group_alone" {
  host = "gpu2.lab"
  telemetry {
    process_group = "ollama" # ERROR: Missing process URL
  }
}

hardware "both" {
  host = "gpu1.lab:11434"
  kubernetes { # ERROR: Conflicting placement
    image = "planrun:dev"
  }
}
hardware "slurm_too" {
  slurm {
    partition = "small"
  }
  kubernetes { # ERROR: Conflicting placement
    image = "planrun:dev"
  }
}
hardware "no_image" {
  kubernetes { # ERROR: Missing image
    namespace = "bench"
  }
}
hardware "names" {
  kubernetes {
    image             = "planrun:dev"
    namespace         = "Bench_Team" # ERROR: Invalid namespace
    service_account   = "runner!" # ERROR: Invalid service_account
    image_pull_policy = "Sometimes" # ERROR: Invalid image_pull_policy
    env_from_secrets  = ["keys", "Bad Secret"] # ERROR: Invalid env_from_secrets
    node_selector     = { "gpu type" = "h200" } # ERROR: Invalid node_selector
    labels            = { "planrun.dev/run" = "x" } # ERROR: Reserved label
    jobs              = "per_node" # ERROR: Invalid jobs
    start_timeout     = "soon" # ERROR: Invalid duration
    ttl_after_finished = "0s" # ERROR: Invalid ttl_after_finished
    tolerations       = [{ key = "nvidia.com/gpu", operator = "Maybe" }] # ERROR: Invalid tolerations
  }
}
hardware "quantities" {
  kubernetes {
    image = "planrun:dev"
    resources {
      requests = { cpu = "2", memory = "lots" } # ERROR: Invalid quantity
      limits   = { cpu = "4" }
    }
  }
}
hardware "over" {
  kubernetes {
    image = "planrun:dev"
    resources {
      requests = { memory = "2Gi" } # ERROR: Request above limit
      limits   = { memory = "1Gi" }
    }
  }
}

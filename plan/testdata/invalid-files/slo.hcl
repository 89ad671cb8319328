backend "ollama" "local" {}
workload "limits" {
  slo {
    ttft_s  = 0 # ERROR: Invalid SLO limit
    tpot_ms = -5 # ERROR: Invalid SLO limit
    e2e_s   = "soon" # ERROR: Invalid e2e_s
    p99     = 1 # ERROR: Unsupported argument
  }
}
workload "empty" {
  slo {} # ERROR: Empty slo block
}
workload "twice" {
  slo {
    ttft_s = 1
  }
  slo { # ERROR: Duplicate slo block
    ttft_s = 2
  }
}
workload "no_slo" {
  capacity { # ERROR: Capacity search without an slo
    target_attainment_pct = 95
  }
}
workload "target" {
  slo {
    ttft_s = 1
  }
  capacity {
    target_attainment_pct = 120 # ERROR: Invalid target_attainment_pct
    resolution            = 0 # ERROR: Invalid resolution
  }
}
workload "both" {
  goal = result.ttft_p50_s < 1
  slo {
    ttft_s = 1
  }
  capacity { # ERROR: Conflicting capacity and goal
    target_attainment_pct = 95
  }
}
workload "descending" {
  concurrency = [8,
    4, # ERROR: Capacity search needs ascending levels
  1]
  slo {
    ttft_s = 1
  }
  capacity {
    target_attainment_pct = 95
  }
}
workload "fraction" {
  slo {
    ttft_s = 1
  }
  capacity { # ERROR: Invalid resolution
    target_attainment_pct = 95
    resolution            = 1.5
  }
}
workload "rates" {
  concurrency  = [4, 8]
  request_rate = [1, 2]
  slo {
    ttft_s = 1
  }
  capacity { # ERROR: Capacity search over two loads
    target_attainment_pct = 95
  }
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.limits]
}
output "markdown" {
  percentiles = [
    50,
    75, # ERROR: Unknown percentile ~ not 75
    50, # ERROR: Duplicate percentile
  ]
}
output "csv" {
  percentiles = [50] # ERROR: Unsupported argument
}

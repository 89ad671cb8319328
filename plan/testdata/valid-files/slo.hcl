# SLOs, a capacity search over concurrency and one over rate, and conditions on the
# SLO figures.
backend "ollama" "local" {}
workload "chat" {
  concurrency = [1, 4, 16]
  slo {
    ttft_s  = 0.5
    tpot_ms = 50
    itl_ms  = 200
    e2e_s   = 10
  }
  capacity {
    target_attainment_pct = 95
  }
}
workload "open" {
  concurrency  = 64
  request_rate = [1, 2, 8]
  slo {
    ttft_s = 1
  }
  capacity {
    target_attainment_pct = 90
    resolution            = 0.25
  }
}
workload "goal" {
  slo {
    e2e_s = 2
  }
  goal = result.slo_attainment_pct >= 99 && result.goodput_tok_s > 10
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.chat, workload.open, workload.goal]
}
expect "slo" {
  condition = result.slo_attainment_pct == null || result.slo_attainment_pct >= 90
}
output "markdown" {
  percentiles = [50, 95, 99]
}

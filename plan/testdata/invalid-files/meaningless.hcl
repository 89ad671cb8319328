# A capacity search or an SLO limit that no measurement of the workload can mean.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
dataset "trace" {
  format = "mooncake"
  path   = "../../../examples/data/trace.jsonl"
}
workload "uncapped" {
  dataset = dataset.trace
  replay {}
  slo {
    ttft_s = 1
  }
  capacity { # ERROR: Capacity search without loads to search ~ uncapped replay
    target_attainment_pct = 95
  }
}
workload "one-cap" {
  dataset     = dataset.trace
  concurrency = 8
  replay {}
  slo {
    ttft_s = 1
  }
  capacity { # ERROR: Capacity search without loads to search ~ capped at one concurrency (8)
    target_attainment_pct = 95
  }
}
workload "caps" {
  dataset     = dataset.trace
  concurrency = [4, 8, 16]
  replay {}
  slo {
    ttft_s = 1
  }
  capacity {
    target_attainment_pct = 95
  }
}
workload "one-token" {
  max_tokens = 1
  slo {
    tpot_ms = 50 # ERROR: Unmeasurable SLO ~ no gap to time
  }
}
workload "one-token-ttft" {
  max_tokens = 1
  slo {
    ttft_s = 0.5
  }
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v]
  workload = [workload.uncapped, workload.one-cap, workload.caps, workload.one-token, workload.one-token-ttft]
}

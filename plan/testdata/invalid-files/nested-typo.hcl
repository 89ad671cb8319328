# One misspelt name in a nested block is one error, on its line: nothing that follows
# from the name being "missing" is reported on the correct lines around it.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
  timeouts {
    conect = "5s" # ERROR: Unsupported argument ~ Did you mean "connect"?
    total  = "60s"
  }
}
dataset "trace" {
  format = "mooncake"
  path   = "../../../examples/data/trace.jsonl"
}
workload "capacity-no-slo" {
  concurrency = [1, 2]
  sloo { # ERROR: Unsupported block type ~ Did you mean "slo"?
    ttft_s = 1
  }
  capacity {
    target_attainment_pct = 95
  }
}
workload "target-typo" {
  concurrency = [1, 2]
  slo {
    ttft_s = 1
  }
  capacity {
    target_attainment_pc = 95 # ERROR: Unsupported argument ~ Did you mean "target_attainment_pct"?
  }
}
workload "replay-dataset-typo" {
  datset = dataset.trace # ERROR: Unsupported argument ~ Did you mean "dataset"?
  replay {
    speedup = 2
  }
}
workload "session-typo" {
  session {
    turn = 2 # ERROR: Unsupported argument ~ Did you mean "turns"?
  }
}
workload "really-missing" {
  concurrency = [1, 2]
  capacity { # ERROR: Capacity search without an slo
    target_attainment_pct = 95
  }
}
matrix "m" {
  modle    = ["a"] # ERROR: Unsupported argument ~ Did you mean "model"?
  tool     = [backend.openai.v]
  workload = [workload.capacity-no-slo, workload.target-typo, workload.replay-dataset-typo, workload.session-typo, workload.really-missing]
}

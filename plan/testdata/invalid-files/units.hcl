# Numbers in the wrong unit are warnings (they are judgements); this file holds them
# beside one error so the walk loads it, and kinds_test.go checks the warnings.
backend "openai" "v" {
  url = "http://127.0.0.1:8000" # a warning: no /v1
}
workload "w" {
  fidelity_tolerance_pct = 0.05
  slo {
    ttft_s  = 500
    tpot_ms = 0.05
    e2e_s   = 120
  }
  goal = result.tpot_p99_ms < 0.04
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}
expect "e" {
  condition = result.ttft_p99_s < 800 && result.e2e_p99_s < 300 && result.conn_setup_max_ms < 0.05
}
expect "bad" {
  condition = result.ttft_p99_s # ERROR: Invalid condition
}

workload "rates" {
  request_rate = [10, 0] # ERROR: Invalid request_rate
}
workload "dup" {
  request_rate = [5, 5] # ERROR: Duplicate request_rate
}
workload "goal" {
  goal = result.ttft_p999_s < 1 # ERROR: Unknown result value
}
workload "fidelity" {
  fidelity_tolerance_pct = 0 # ERROR: Invalid fidelity_tolerance_pct
}
workload "fidelity_all" {
  fidelity_tolerance_pct = 100 # ERROR: Invalid fidelity_tolerance_pct
}
workload "lag_zero" {
  fidelity_lag_ms = 0 # ERROR: Invalid fidelity_lag_ms
}
workload "lag_negative" {
  fidelity_lag_ms = -2 # ERROR: Invalid fidelity_lag_ms
}
workload "ramp_paced" {
  request_rate = [10]
  ramp         = "2s" # ERROR: ramp without a closed loop
}
workload "ramp_negative" {
  ramp = "-1s" # ERROR: Invalid duration
}

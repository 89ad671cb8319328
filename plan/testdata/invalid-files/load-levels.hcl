workload "rates" {
  request_rate = [10, 0] # ERROR: Invalid request_rate
}
workload "dup" {
  request_rate = [5, 5] # ERROR: Duplicate request_rate
}
workload "goal" {
  goal = result.ttft_p999_s < 1 # ERROR: Unknown result value
}

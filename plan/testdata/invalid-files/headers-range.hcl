# An error inside a multi-line value points at the offending item, not its first line.
variable "tool" {
  default = null
}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
  headers = {
    "X-Team"        = "bench"
    "Authorization" = "Bearer sk-123" # ERROR: Literal API key in plan
    "X-Trace"       = "on"
  }
  extra_fields = {
    top_p = 0.9
  }
}
workload "w" {
  concurrency = [
    1,
    0, # ERROR: Invalid concurrency
    4,
    4, # ERROR: Duplicate concurrency level
  ]
  measure = [
    "ttft",
    "tpott", # ERROR: Unknown measure
  ]
  request_rate = [
    1,
    -2, # ERROR: Invalid request_rate
  ]
}
reference "r" {
  match = {
    model = "a"
    gpu   = "x" # ERROR: Invalid match key
  }
  ttft_s = [0.1, 1]
}

# Each error on the line that is wrong, not on a correct line beside it; and a model
# mix with an empty name (a variable left empty) is refused.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
workload "rates" {
  request_rate = [2, 8, 4] # ERROR: Capacity search needs ascending levels ~ list request_rate
  slo {
    ttft_s = 1
  }
  capacity {
    target_attainment_pct = 95
  }
}
variable "adapter" { default = "" }
workload "mix" {
  models = {
    "base"          = 1
    (var.adapter)   = 1 # ERROR: Invalid models ~ is empty
  }
}
matrix "m" {
  model    = ["base"]
  tool     = [backend.openai.v]
  workload = [workload.rates, workload.mix]
}

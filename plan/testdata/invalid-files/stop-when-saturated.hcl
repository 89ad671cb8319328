backend "openai" "gw" {
  url = "http://127.0.0.1:8000/v1"
}
workload "closed" {
  concurrency         = 4
  stop_when_saturated = true # ERROR: Invalid stop_when_saturated ~ closed loop
}
workload "open" {
  request_rate        = [2, 4]
  stop_when_saturated = true
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.gw]
  workload = [workload.open]
}

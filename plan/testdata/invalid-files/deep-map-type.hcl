# A wrong type deep in a map or list is blamed on the value's own range, not on the
# first line of the collection.
variable "team" { default = { name = "a" } }
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
  headers = {
    "X-A" = "ok"
    "X-B" = "ok"
    "X-C" = { nested = true } # ERROR: Invalid headers ~ ["X-C"]
  }
}
backend "openai" "w" {
  url = "http://127.0.0.1:8000/v1"
  headers = {
    "X-A" = "ok"
    "X-Team" = var.team # ERROR: Invalid headers ~ ["X-Team"]
  }
}
server "s" {
  command = ["true"]
  env = {
    HOME = "/tmp"
    PATH = ["/bin", "/usr/bin"] # ERROR: Invalid env ~ ["PATH"]
  }
}
workload "w" {
  concurrency = [
    1,
    2,
    [4], # ERROR: Invalid concurrency
  ]
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v, backend.openai.w]
  workload = [workload.w]
}

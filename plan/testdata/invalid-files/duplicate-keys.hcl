# A key given twice in a map: HCL keeps one value silently, so a model of the mix would
# never get a request.
backend "openai" "gw" {
  url = "http://127.0.0.1:8000/v1"
  headers = {
    "X-Team" = "a"
    X-Trace  = "1"
    "X-Team" = "b" # ERROR: Duplicate key ~ first at testdata/invalid-files/duplicate-keys.hcl:6
  }
}
locals {
  weights = { small = 1, large = 2, small = 3 } # ERROR: Duplicate key
}
workload "mix" {
  models = {
    "qwen2.5:7b" = 3
    "llama3:8b"  = 1
    "qwen2.5:7b" = 1 # ERROR: Duplicate key ~ "qwen2.5:7b" is given twice
  }
}
variable "base" { default = "llama3:8b" }
workload "computed" {
  models = {
    "llama3:8b" = 1
    (var.base)  = 2 # ERROR: Duplicate key ~ "llama3:8b" is given twice
  }
}
workload "nested" {
  models = local.weights
}
reference "r" {
  match  = { model = "a", model = "b" } # ERROR: Duplicate key
  ttft_s = [0.1, 1]
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.gw]
  workload = [workload.mix, workload.nested, workload.computed]
}

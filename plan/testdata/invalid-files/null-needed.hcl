# Expressions that give null with the values given, where a value is needed: each is
# evaluated with the variables' values and reported with them.
variable "use_trace" { default = false }
variable "remote" { default = false }
variable "url" { default = "http://127.0.0.1:8000/v1" }
backend "openai" "v" {
  url = var.remote ? var.url : null # ERROR: Missing url ~ evaluates to null with the values given
}
backend "openai" "ok" {
  url = var.remote ? null : var.url
}
dataset "trace" {
  format = var.use_trace ? "mooncake" : null # ERROR: Null format
  path   = var.use_trace ? "../../../examples/data/trace.jsonl" : null # ERROR: Null path
}
dataset "real" {
  format = "mooncake"
  path   = "../../../examples/data/trace.jsonl"
}
workload "replay" {
  dataset = var.use_trace ? dataset.real : null # ERROR: Null dataset ~ Mooncake trace
  replay {}
}
workload "fine" {
  dataset = var.use_trace ? null : dataset.real
  replay {}
}
workload "optional" {
  dataset = var.use_trace ? dataset.real : null
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v, backend.openai.ok]
  workload = [workload.replay, workload.fine, workload.optional]
}

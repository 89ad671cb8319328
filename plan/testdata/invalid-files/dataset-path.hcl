# A dataset path that names a directory or nothing: a diagnostic at the path, before any request.
variable "data" { default = "." }
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
dataset "dir" {
  format = "jsonl"
  path   = var.data # ERROR: Cannot read dataset ~ is a directory
}
dataset "sub" {
  format = "jsonl"
  path   = "../invalid-files" # ERROR: Cannot read dataset ~ is a directory
}
dataset "none" {
  format = "jsonl"
  path   = "no-such-file.jsonl" # ERROR: Cannot read dataset ~ no such file or directory
}
dataset "ok" {
  format = "jsonl"
  path   = "../../../examples/data/prompts.jsonl"
}
workload "w" {
  dataset = dataset.dir
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}

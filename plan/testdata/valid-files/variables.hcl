variable "models" {
  type    = list(string)
  default = ["a", "b"]
}
variable "levels" {
  type    = list(number)
  default = [1, 2]
  validation {
    condition     = length(var.levels) > 0
    error_message = "Levels are positive."
  }
}
variable "tag" {
  default     = "v1"
  description = "A tag."
  sensitive   = true
}
locals {
  upper_models = [for m in var.models : upper(m)]
  label        = join("+", local.upper_models)
  settings     = jsondecode("{\"rate\": 2}")
}
backend "taotoken" "gw" {}
workload "w" {
  concurrency  = var.levels
  request_rate = local.settings.rate
  arrival      = "constant"
  temperature  = 0.5
  seed         = 7
  prompt       = format("%s-%s", local.label, var.tag)
  timeouts {
    first_token = "30s"
  }
}
matrix "v" {
  model    = local.upper_models
  tool     = backend.taotoken.gw
  workload = workload.w
}
reference "r" {
  match        = { model = "A", tool = backend.taotoken.gw }
  ttft_s       = [0.5, 1]
  output_tok_s = [30, 40]
}
expect "fast" {
  condition = result.ttft_p50_s < 1 && result.tool == "taotoken.gw"
  cells     = ["v/A/*"]
}
output "jsonl" {}
output "markdown" {
  path     = "out/r.md"
  language = "zh"
}

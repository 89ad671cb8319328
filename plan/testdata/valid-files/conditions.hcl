# Conditions and goals that are right, however they are written: validate must not
# blame them (they are checked against result.*'s types before any request).
variable "max_ttft" {
  type    = number
  default = 2
}
variable "skip" {
  type    = list(string)
  default = ["b"]
}
backend "ollama" "local" {}
workload "w" {
  concurrency = [1, 2, 4]
  goal        = result.ttft_p99_s < var.max_ttft && result.error_rate <= 0.01
}
matrix "m" {
  model    = ["a", "b", "c"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = var.skip
  }
}
expect "regex" {
  condition = length(regexall("^m/a/", result.cell)) == 0 || result.ttft_p50_s < 1
}
expect "ternary" {
  condition = result.requests > 0 ? result.failed / result.requests < 0.1 : true
}
expect "coalesce" {
  condition = coalesce(result.vram_peak_gb, 0) < 80
  cells     = ["m/a/*", "m/c/*"]
}
expect "strings" {
  condition = contains(["stable", "unstable"], result.stability) || lower(result.model) != ""
}

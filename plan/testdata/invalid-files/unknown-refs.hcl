# Values unknown because their own block failed: only that block's line is blamed.
variable "n" {
  type    = number
  default = "x" # ERROR: Invalid value for variable
}
locals {
  tag = "v${var.n}"
  ids = { a = "org/a-${var.n}" }
}
backend "ollama" "local" {
  url        = "http://127.0.0.1:${var.n}"
  keep_alive = "${var.n}m"
}
hardware "h" {
  vram_gb = var.n
  notes   = local.tag
}
workload "w" {
  max_tokens  = var.n
  concurrency = [1, var.n]
  measure     = [local.tag]
  goal        = result.ttft_p50_s < var.n
}
matrix "m" {
  model        = ["a", local.tag]
  quantization = [local.tag]
  tool         = [backend.ollama.local]
  hardware     = [hardware.h]
  workload     = [workload.w]
  model_id     = local.ids[matrix.model]
  notes        = "${local.tag} ${var.n}"
  exclude {
    model = "a"
  }
  include {
    model = "z"
  }
}
reference "r" {
  match  = { model = local.tag }
  ttft_s = [var.n, 2]
}
expect "e" {
  condition = result.ttft_p50_s < var.n
  cells     = ["m/${local.tag}/*"]
}

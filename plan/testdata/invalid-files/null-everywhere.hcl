# null in every kind of attribute: a leaf means "not set"; a list or map element, a
# match value, a range bound or an exclude value is a mistake.
variable "n" {
  default = null
}
backend "ollama" "local" {
  url     = var.n
  headers = { "X-Team" = var.n } # ERROR: Invalid headers
}
server "s" {
  command = ["ollama", var.n] # ERROR: Invalid command
}
workload "w" {
  concurrency = [1, var.n] # ERROR: Invalid concurrency
  measure     = ["ttft", null] # ERROR: Invalid measure
}
reference "r" {
  match  = { model = "a" }
  ttft_s = [var.n, 1] # ERROR: Invalid ttft_s
}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = var.n # ERROR: Invalid exclude
  }
}

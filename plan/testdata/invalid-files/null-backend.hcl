variable "none" {
  default = null
}
variable "env" {
  type    = string
  default = null
}
backend "openai" "vllm" {
  url         = var.none # ERROR: Missing url
  api         = var.env
  api_key_env = var.env
  headers     = var.none
  timeouts {
    connect = var.none
    total   = null
  }
}
backend "ollama" "local" {
  keep_alive   = var.env
  ensure_model = null
  server       = var.none
}

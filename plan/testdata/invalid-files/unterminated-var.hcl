variable "url" {
  default = "http://127.0.0.1:11434 # ERROR: Unterminated template string
}
backend "ollama" "local" {
  url = var.url
}

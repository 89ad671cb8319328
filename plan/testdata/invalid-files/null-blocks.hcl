# null leaves mean "not set" in every block kind; only a null where a value is
# required is an error.
variable "n" {
  default = null
}
server "s" {
  command     = var.n # ERROR: Missing command
  args        = var.n
  env         = { HOME = var.n } # ERROR: Invalid env
  stop_signal = null
  ready {
    url     = var.n
    timeout = var.n
  }
}
hardware "h" {
  gpu     = var.n
  vram_gb = var.n
}
output "csv" {
  path = var.n
}

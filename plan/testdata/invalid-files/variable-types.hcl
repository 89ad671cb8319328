variable "a" {
  type    = list(number)
  default = [1, "x"] # ERROR: Invalid value for variable
}
variable "b" {
  type    = map(string)
  default = { k = [1] } # ERROR: Invalid value for variable
}
variable "c" {
  type    = strng # ERROR: Invalid type specification
  default = "x"
}
variable "d" { # ERROR: No value for required variable
  type = string
}
variable "e" {
  default = var.a # ERROR: Variables not allowed
}
backend "ollama" "local" {
  url = "http://h:${var.a[0]}"
}
workload "w" {
  concurrency = var.a
  prompt      = var.b["k"]
}

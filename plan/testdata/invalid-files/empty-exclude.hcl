# An empty list in an exclude matches nothing: it would otherwise drop every cell.
variable "skip" {
  type    = list(string)
  default = []
}
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = [] # ERROR: Exclude matches nothing
  }
  exclude {
    model = var.skip # ERROR: Exclude matches nothing
  }
}

variable "drop" {
  type    = list(string)
  default = ["a", "b"]
}
backend "ollama" "local" {}
workload "w" {}
matrix "m" { # ERROR: Matrix has no cells
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = var.drop
  }
}
matrix "n" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = ["a"]
  }
  exclude {
    model    = "b"
    workload = [] # ERROR: Exclude matches nothing
  }
}
matrix "k" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    tool = backend.ollama.local
  }
  include {
    model = "z"
  }
}

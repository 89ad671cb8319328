backend "ollama" "local" {}
workload "w" {}
hardware "h" {}
matrix "m" {
  model        = ["a", "b", "a"] # ERROR: Duplicate matrix value
  quantization = []              # ERROR: Empty matrix dimension
  tool         = [backend.ollama.local, hardware.h] # ERROR: Invalid tool
  workload     = [workload.w]
  exclude {
    model = "c" # ERROR: Exclude matches nothing
  }
  include { # ERROR: Incomplete include
    tool = backend.ollama.local
  }
}
matrix "n" { # ERROR: Missing required argument
  model = ["a"]
  tool  = [backend.ollama.local]
}
matrix "n" { # ERROR: Duplicate matrix block
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

backend "ollama" "local" {}
backend "ollama" "local" { # ERROR: Duplicate backend block
  url = "ftp://x"
}
workload "w" {}
workload "w" { # ERROR: Duplicate workload block
  concurrency = [0]
}
hardware "h" {}
hardware "h" { # ERROR: Duplicate hardware block
}
expect "e" {
  condition = true
}
expect "e" { # ERROR: Duplicate expect block
  condition = 1
}
reference "r" {
  match  = { model = "a" }
  ttft_s = [1, 2]
}
reference "r" { # ERROR: Duplicate reference block
  match = {}
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

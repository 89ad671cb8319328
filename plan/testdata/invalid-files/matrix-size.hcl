# A matrix too large to expand is refused from its dimensions alone, before expanding.
backend "ollama" "local" {}
workload "a" {}
workload "b" {}
workload "c" {}
workload "d" {}
workload "e" {}
workload "f" {}
matrix "m" { # ERROR: Matrix too large ~ combines 1000 models × 1000 quantizations × 6 workloads
  model        = [for i in range(1000) : "m${i}"]
  quantization = [for i in range(1000) : "q${i}"]
  tool         = [backend.ollama.local]
  workload     = [workload.a, workload.b, workload.c, workload.d, workload.e, workload.f]
}

backend "ollama" "local" {}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
workload "w" {}
matrix "m" { # ERROR: Matrix has no cells
  model    = ["a", "b"]
  tool     = [backend.ollama.local, backend.openai.vllm]
  workload = [workload.w]
  exclude {
    tool = backend.ollama.local
  }
  exclude {
    tool = backend.openai.vllm
  }
}
matrix "ok" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = "a"
  }
}
matrix "all" { # ERROR: Matrix has no cells
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  exclude {
    model = "a"
  }
}

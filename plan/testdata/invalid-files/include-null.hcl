variable "n" {
  type    = string
  default = null
}
backend "ollama" "local" {}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
workload "w" {}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local, backend.openai.vllm]
  workload = [workload.w]
  include {
    model = var.n # ERROR: Invalid model
    tool  = backend.ollama.local
  }
  include {
    model = "c"
    tool  = null # ERROR: Invalid tool
  }
  include {
    model    = "d"
    tool     = backend.openai.vllm
    model_id = nosuch("d") # ERROR: Call to unknown function
  }
  exclude {
    model = ["a", null] # ERROR: Invalid model
  }
}

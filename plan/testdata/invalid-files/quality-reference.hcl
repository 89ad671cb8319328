backend "ollama" "local" {}
workload "w" {}
matrix "unknown" {
  model        = ["m"]
  quantization = ["f16", "q8_0"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  quality {
    reference = "f32" # ERROR: Unknown quality reference ~ ("f16" or "q8_0")
  }
}
matrix "later" {
  model        = ["m"]
  quantization = ["q4_K_M", "f16"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  quality {
    reference = "f16" # ERROR: Quality reference runs later ~ List "f16" first
  }
}
matrix "excluded" {
  model        = ["m"]
  quantization = ["f16", "q8_0"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  exclude {
    quantization = "f16"
  }
  quality {
    reference = "f16" # ERROR: Quality reference excluded
  }
}
matrix "by_id" {
  model    = ["m"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  quality {
    reference = "unknown/m/f16/ollama.local/-/ww" # ERROR: Unknown quality reference ~ Did you mean "unknown/m/f16/ollama.local/-/w"?
  }
}

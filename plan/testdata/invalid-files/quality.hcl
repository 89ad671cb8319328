backend "ollama" "local" {}
workload "w" {}
dataset "words" {
  format = "text"
  path   = "quality.hcl"
}
matrix "unknown" {
  model        = ["m"]
  quantization = ["f16", "q8_0"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  quality {
    reference    = "f32"
    prompts      = 0 # ERROR: Invalid prompts
    top_logprobs = 21 # ERROR: Invalid top_logprobs
    max_tokens   = "many" # ERROR: Invalid max_tokens ~ max_tokens is a number, written without quotes.
    method       = "teach" # ERROR: Unknown quality method ~ Did you mean "teacher"?
    temperature  = 1 # ERROR: Unsupported argument
  }
}
matrix "later" {
  model        = ["m"]
  quantization = ["q4_K_M", "f16"]
  tool         = [backend.ollama.local]
  workload     = [workload.w]
  quality {
    reference = "f16"
    dataset   = "words" # ERROR: Invalid quality dataset
    accuracy {
      path   = "no-such.jsonl" # ERROR: Cannot read accuracy file
      scorer = "fuzzy" # ERROR: Unknown scorer
    }
    accuracy { # ERROR: Duplicate accuracy block
      path   = "quality.hcl"
      scorer = "exact"
    }
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
    reference = "f16"
    dataset   = dataset.words
  }
  quality { # ERROR: Duplicate quality block
    reference = "f16"
  }
}
matrix "empty" {
  model    = ["m"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  quality { # ERROR: Missing required argument
  }
}

# A quality accuracy file is read by validate as the quality phase will: a line it
# would stop on is an error on the accuracy block's path, naming file:line.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
workload "w" {
  requests = 8
}
matrix "regex" {
  model        = ["m"]
  quantization = ["f16", "q8_0"]
  tool         = [backend.openai.v]
  workload     = [workload.w]
  quality {
    reference = "f16"
    accuracy {
      path   = "accuracy-regex.jsonl" # ERROR: Invalid accuracy file ~ accuracy-regex.jsonl:2: answer is not a regular expression
      scorer = "regex"
    }
  }
}
matrix "fields" {
  model        = ["m"]
  quantization = ["f16", "q8_0"]
  tool         = [backend.openai.v]
  workload     = [workload.w]
  quality {
    reference = "f16"
    accuracy {
      path   = "accuracy-fields.jsonl" # ERROR: Invalid accuracy file ~ accuracy-fields.jsonl:1: a line needs a "prompt" and an "answer"
      scorer = "exact"
    }
  }
}

backend "ollama" "local" {
  api = "responses" # ERROR: Invalid api
}
backend "taotoken" "gw" {
  api = "embeddings" # ERROR: Invalid api
}
backend "openai" "chat" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "embed" {
  url = "http://127.0.0.1:8000/v1"
  api = "embeddings"
}
workload "vectors" {
  max_tokens = 16 # ERROR: Conflicting arguments
  embeddings { # ERROR: Embeddings workload on a generation endpoint
    inputs       = [1, 0] # ERROR: Invalid inputs
    input_tokens = [] # ERROR: Invalid input_tokens
  }
}
workload "chat" { # ERROR: Generation workload on an embeddings endpoint
  max_tokens = 16
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.chat, backend.openai.embed]
  workload = [workload.vectors, workload.chat]
  exclude {
    tool     = backend.openai.embed
    workload = workload.vectors
  }
  exclude {
    tool     = backend.openai.chat
    workload = workload.chat
  }
}
workload "no_share" {
  models = { "a" = 0, "b" = 0 } # ERROR: Invalid models ~ The weights sum to 0
}
workload "negative" {
  models = { "a" = 2, "b" = -1 } # ERROR: Invalid models ~ weights are shares
}

# One mistake that applies to several backends is one error naming all of them.
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
backend "ollama" "local" {
  api = "generate"
}
backend "openai" "sglang" {
  url = "http://127.0.0.1:30000/v1"
  api = "completions"
}
workload "emb" {
  embeddings { # ERROR: Embeddings workload on a generation endpoint ~ backends openai.vllm uses api = "chat", ollama.local uses api = "generate", openai.sglang uses api = "completions"
    inputs = [4]
  }
}
workload "talk" {
  session { # ERROR: Session on a prompt-only endpoint ~ backends ollama.local uses api = "generate", openai.sglang uses api = "completions"
    turns = 3
  }
}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.openai.vllm, backend.ollama.local, backend.openai.sglang]
  workload = [workload.emb, workload.talk]
}

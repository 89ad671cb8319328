# References to blocks that are not there, with did-you-mean.
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool = [
    backend.ollama.locl, # ERROR: Reference to undeclared backend
    backend.openai.vllm, # ERROR: Reference to undeclared backend
  ]
  hardware = [hardware.rtx4060] # ERROR: Reference to undeclared hardware
  workload = [workload.short] # ERROR: Reference to undeclared workload
  server   = server.vllm # ERROR: Reference to undeclared server
}

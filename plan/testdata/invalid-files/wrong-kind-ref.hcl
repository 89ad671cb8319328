# A reference to a block of another kind that shares a name: the did-you-mean names the
# right block, never the name it just rejected.
backend "ollama" "o" {}
hardware "o" {}
workload "o" {}
hardware "gpu" {}
matrix "m" {
  model    = ["a"]
  tool     = [hardware.o] # ERROR: Invalid tool ~ did you mean backend.ollama.o?
  hardware = [backend.ollama.o] # ERROR: Invalid hardware ~ did you mean hardware.o?
  workload = [hardware.gpu] # ERROR: Invalid workload ~ hardware.gpu is not a workload
}
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
matrix "kinds" {
  model    = ["a"]
  tool     = [backend.ollama.vllm] # ERROR: Reference to undeclared backend ~ Did you mean backend.openai.vllm?
  workload = [workload.o]
}

# A kind or format named by its file extension or another common name gets the name
# planrun uses; an article fits the kind it names.
backend "ollama" "o" {
  url = "http://127.0.0.1:11434"
  api = "completion" # ERROR: Invalid api ~ An ollama backend's api is
}
dataset "d" {
  format = "ndjson" # ERROR: Unknown dataset format ~ Did you mean "jsonl"?
  path   = "../../../examples/data/prompts.jsonl"
}
workload "w" {}
matrix "m" {
  model    = ["m"]
  tool     = [backend.ollama.o]
  workload = [workload.w]
}
output "md" { # ERROR: Unknown output kind ~ Did you mean "markdown"?
  path = "results.md"
}

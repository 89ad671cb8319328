# A backend named after its engine: the kind is the API planrun speaks, so the error
# says which one the engine serves; its references are not more errors.
backend "vllm" "local" { # ERROR: Unknown backend kind ~ vllm serves openai's, so write backend "openai" with the server's url.
  url = "http://127.0.0.1:8000/v1"
}
backend "claude" "api" { # ERROR: Unknown backend kind ~ write backend "anthropic"
  url = "https://api.anthropic.com"
}
workload "w" {
  requests = 8
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.vllm.local, backend.claude.api]
  workload = [workload.w]
}

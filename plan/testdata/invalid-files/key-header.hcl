# How the key is sent is the anthropic kind's choice alone, and one of its two ways.
backend "anthropic" "a" {
  url            = "http://127.0.0.1:8000/v1"
  api_key_env    = "ANTHROPIC_API_KEY"
  api_key_header = "x-api-kye" # ERROR: Invalid api_key_header ~ Did you mean "x-api-key"?
}
backend "anthropic" "b" {
  url               = "http://127.0.0.1:8000/v1"
  engine_extensions = true # ERROR: Unsupported argument
}
backend "openai" "o" {
  url            = "http://127.0.0.1:8000/v1"
  api_key_header = "x-api-key" # ERROR: Unsupported argument ~ Authorization: Bearer only
}
workload "w" { prompt_tokens = 8 }
matrix "m" {
  model    = ["a"]
  tool     = [backend.anthropic.a, backend.anthropic.b, backend.openai.o]
  workload = [workload.w]
}

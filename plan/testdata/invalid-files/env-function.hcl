# env() as in other tools' templates: the plan language has none, and the error says
# how a plan reads the environment (a declared variable, PLANRUN_VAR_<name>; api_key_env).
backend "openai" "v" {
  url = env("VLLM_URL") # ERROR: Call to unknown function ~ declare variable "url" {} and use var.url, set by PLANRUN_VAR_url
}
backend "openai" "w" {
  url     = "http://127.0.0.1:8001/v1"
  headers = { Authorization = "Bearer ${getenv("TOKEN")}" } # ERROR: Call to unknown function ~ for an API key, name its variable in the backend's api_key_env
}
workload "w" {}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v, backend.openai.w]
  workload = [workload.w]
}

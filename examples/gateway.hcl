# The taotoken backend (the gateway's strict profile) through a real gateway on this
# machine: LiteLLM's proxy, started and stopped by planrun, in front of a running Ollama
# with one key, the stand-in for the TaoToken gateway's "one key, many models". The same
# cell runs direct against Ollama's /v1 too, so the two rows give the gateway's added
# latency. Install the proxy once with scripts/install-litellm.sh, then:
#
#   export TAOTOKEN_API_KEY=sk-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
#   planrun apply examples/gateway.hcl -var ollama=http://127.0.0.1:11434 -var port=4000
#
# The key is read from the environment by both sides (gateway/litellm.yaml's master_key,
# the backend's api_key_env) and written nowhere. Routes live in gateway/litellm.yaml:
# another engine (vLLM) is one more entry there.

variable "ollama" {
  type        = string
  default     = "http://127.0.0.1:11434"
  description = "Base URL of the running Ollama that serves the model (without /v1)."
}

variable "port" {
  type        = number
  default     = 4000
  description = "Loopback port the gateway listens on."
}

variable "litellm" {
  type        = string
  default     = "../.tools/litellm/bin/litellm"
  description = "The LiteLLM proxy that scripts/install-litellm.sh installs."
}

server "gateway" {
  command = [var.litellm, "--config", "gateway/litellm.yaml", "--host", "127.0.0.1", "--port", "${var.port}"]
  dir     = "."
  env = {
    GATEWAY_OLLAMA_V1            = "${var.ollama}/v1"
    LITELLM_LOCAL_MODEL_COST_MAP = "True" # the bundled cost map: never fetched from the internet
  }
  ready {
    url     = "http://127.0.0.1:${var.port}/health/liveliness"
    timeout = "120s"
  }
  log = "../results/gateway/litellm.log"
}

backend "taotoken" "gateway" {
  url         = "http://127.0.0.1:${var.port}/v1"
  api_key_env = "TAOTOKEN_API_KEY"
  server      = server.gateway
}

backend "openai" "direct" {
  url = "${var.ollama}/v1"
}

workload "chat" {
  prompt_tokens = 64
  max_tokens    = 16
  concurrency   = [1]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 8
  temperature   = 0
  seed          = 42
}

matrix "gateway" {
  model    = ["tiny"]
  tool     = [backend.openai.direct, backend.taotoken.gateway]
  workload = [workload.chat]
  model_id = "tiny"
}

output "csv" {
  path = "../results/gateway/results.csv"
}

output "markdown" {
  path = "../results/gateway/results.md"
}

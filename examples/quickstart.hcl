# The quickstart: one tiny model served by a real Ollama that planrun starts and stops
# itself, measured through Ollama's native API and through its OpenAI-compatible /v1 at
# concurrency 1 and 4. Run it with `make quickstart` (scripts/quickstart.sh), which builds
# the pinned Ollama, writes the tiny model and picks a free port; by hand:
#
#   go run ./tools/tinymodel -o .tools/quickstart
#   planrun apply examples/quickstart.hcl -var port=11500 \
#     -var ollama=$PWD/.tools/bin/ollama -var dir=$PWD/.tools/quickstart
#
# The model has random weights: its text is noise, its timings are real CPU inference.

variable "port" {
  type        = number
  default     = 11500
  description = "Loopback port the quickstart's Ollama listens on (the script picks a free one)."
}

variable "ollama" {
  type        = string
  default     = "ollama"
  description = "The ollama binary (the script passes the pinned build in .tools/bin)."
}

variable "dir" {
  type        = string
  default     = "/tmp/planrun-quickstart"
  description = "Absolute directory holding the Modelfile and tiny.gguf; models and HOME go under it."
}

locals {
  host = "127.0.0.1:${var.port}"
}

server "ollama" {
  command = [var.ollama, "serve"]
  dir     = var.dir
  # Everything under dir: the quickstart never touches ~/.ollama or a running Ollama.
  env = {
    OLLAMA_HOST         = local.host
    OLLAMA_MODELS       = "${var.dir}/models"
    HOME                = "${var.dir}/home"
    OLLAMA_NUM_PARALLEL = "4" # four requests decode together at concurrency 4
  }
  ready {
    url     = "http://${local.host}/api/version"
    timeout = "60s"
  }
  log   = "${var.dir}/ollama.log"
  setup = [[var.ollama, "create", "tiny", "-f", "${var.dir}/Modelfile"]]
}

backend "ollama" "native" {
  url          = "http://${local.host}"
  server       = server.ollama
  ensure_model = "check" # setup created it; a missing model fails the cell with how to get it
}

backend "openai" "v1" {
  url    = "http://${local.host}/v1"
  server = server.ollama
}

workload "quick" {
  prompt_tokens = 64
  max_tokens    = 64
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 8
  temperature   = 0
  seed          = 42
}

matrix "quickstart" {
  model    = ["tiny"]
  tool     = [backend.ollama.native, backend.openai.v1]
  workload = [workload.quick]
  model_id = "tiny"
}

expect "no-errors" {
  condition     = result.error_rate == 0
  error_message = "Some requests failed: see the notes column and the server log."
}

output "csv" {
  path = "../results/quickstart/results.csv"
}

output "markdown" {
  path = "../results/quickstart/results.md"
}

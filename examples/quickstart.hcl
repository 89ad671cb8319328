# The quickstart: the seed's table, every column measured on this machine. planrun starts
# a real Ollama itself, has it make three quantizations of one seeded F16 model (about 25M
# parameters, written by tools/tinymodel -large), proves each is what Ollama serves
# (/api/show), measures each variant's drift from F16 (the Quality column), then each
# through Ollama's native API at concurrency 1 and 4
# with the server pinned to one CPU, then the smallest again with the server on two CPUs
# (through /v1 too), with the memory its processes hold (RSS, and PSS beside it) against
# the seed's estimate. Run it with `make quickstart` (scripts/quickstart.sh),
# which builds the pinned Ollama, writes the model and picks a free port; by hand:
#
#   go run ./tools/tinymodel -large -o .tools/quickstart-25m
#   planrun apply examples/quickstart.hcl -var port=11500 \
#     -var ollama=$PWD/.tools/bin/ollama -var dir=$PWD/.tools/quickstart-25m
#
# The model has random weights: its text is noise, its timings and memory are real CPU
# inference. docs/seed-table.md says what each column is measured with.

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
  # Ollama makes each from the one F16 file (ollama create --quantize).
  quantizations = ["f16", "q8_0", "q4_K_M"]
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
    # One model loaded at a time: the memory of the server's processes is then the
    # measured variant's, not the sum of every variant measured before it.
    OLLAMA_MAX_LOADED_MODELS = "1"
  }
  ready {
    url     = "http://${local.host}/api/version"
    timeout = "60s"
  }
  log = "${var.dir}/ollama.log"
  # The variants, made once from each tiny.gguf: the server starts again for each CPU
  # set, and a variant already made from the same file (its digest in .made-<variant>) is
  # kept (quantizing Q4_K_M takes seconds on two cores); one made from another file (an
  # older tinymodel) is made again.
  setup = [for q in local.quantizations : ["/bin/sh", "-c",
    "sum=$(sha256sum tiny.gguf | cut -c1-64); [ \"$(cat .made-tiny-${q} 2>/dev/null)\" = \"$sum\" ] && \"$0\" show tiny-${q} >/dev/null 2>&1 || { \"$0\" create tiny-${q} --quantize ${q} -f Modelfile && echo \"$sum\" > .made-tiny-${q}; }",
  var.ollama]]
}

# Two real hardware rows on one machine: the server restricted to one core, then to two
# (and Ollama's num_thread to match). Rows say the cores the kernel really allowed it.
hardware "cpu1" { cpus = "1" }
hardware "cpu2" { cpus = "0-1" }

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
  prompt_tokens = 32
  max_tokens    = 16
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 2
  requests      = 4
  temperature   = 0
  seed          = 42
}

# Model × quantization × tool × hardware. On one core: the three variants through the
# native API. On two cores: the smallest again, through the native API and through /v1
# (the protocol's own overhead). One matrix per CPU set, the cpu1 matrix first, so the
# server starts once per set (cells run in plan order). /v1 runs on two cores because
# the OpenAI protocol cannot set Ollama's num_thread: its runner takes Ollama's default,
# a thread per physical core of the machine (2 on the 2-core machine this was written
# on, where it matches two cores and not one; a row says when its runner ran more
# threads than its cores), and planrun's native cell sets 2 there too, so both cells
# run one runner alike. Two
# llama.cpp threads on two cores wait on each other whenever anything else takes a core,
# which is why the cpu2 rows are one variant: on a busy machine they are the slowest
# part of the run (docs/quickstart.md).
matrix "cpu1" {
  model        = ["tiny-25m"]
  quantization = local.quantizations
  tool         = [backend.ollama.native]
  hardware     = [hardware.cpu1]
  workload     = [workload.quick]
  model_id     = "tiny-${matrix.quantization}"
  # The Quality column: each variant against F16 along F16's greedy continuations of 12
  # seeded prompts, 12 tokens each, before its timed levels (docs/quality.md; 12 × 12
  # keeps the phase short: the test of Q4_K_M against Q8_0 uses 16 × 16). A random
  # model's drift shows the mechanism, not a real model's loss.
  quality {
    reference    = "f16"
    prompts      = 12
    prompt_words = 12
    max_tokens   = 12
    top_logprobs = 5
    seed         = 1
  }
}

matrix "cpu2" {
  model        = ["tiny-25m"]
  quantization = ["q4_K_M"]
  tool         = [backend.ollama.native, backend.openai.v1]
  hardware     = [hardware.cpu2]
  workload     = [workload.quick]
  model_id     = "tiny-${matrix.quantization}"
}

# The answer the report opens with (docs/decisions.md): the variant, tool, CPU set and load
# that give one user their tokens fastest (TPOT p50, whose interval 8 requests bound) within
# a memory budget, with the runner-up and whether the intervals tell them apart.
decision "pick" {
  objective = minimize(result.tpot_p50_ms)
  constraints = [
    result.memory_gb <= 0.5, # the server's processes (RSS): the variants need 0.10-0.16 GB
    result.error_rate <= 0,
    # A quality floor against F16 is one more line: result.quality_same_top1_pct >= 95.
    # It is left out here because only the cpu1 rows run the quality phase: a floor
    # would exclude the cpu2 rows (and F16's own) as "not measured" (docs/decisions.md).
  ]
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

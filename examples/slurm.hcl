# Two kinds of card as two Slurm partitions: every cell runs as a batch job on the node
# Slurm allocates, with its server started there, so the client sits next to the server
# and NVML is sampled on that node. The rows come back into one ledger and report.
#
# The defaults match the single-node cluster of scripts/slurm-cluster.sh (partitions
# "small" and "large") and what `make quickstart` leaves in .tools/ (bin/planrun,
# bin/ollama and the 25M-parameter model in quickstart-25m/). After `make quickstart`, as root:
#
#   scripts/slurm-cluster.sh start
#   .tools/bin/planrun apply examples/slurm.hcl
#
# On a real cluster: the run directory (results/) must be on a filesystem the nodes
# share, and planrun must be at the same path there (or set planrun_path).
# `planrun plan -slurm-script small examples/slurm.hcl` prints a job's batch script.

variable "small_partition" {
  type        = string
  default     = "small"
  description = "Partition for the mock server's cells."
}

variable "large_partition" {
  type        = string
  default     = "large"
  description = "Partition for the Ollama cells."
}

variable "tools" {
  type        = string
  default     = "../.tools"
  description = "The directory `make quickstart` fills (relative to this plan's directory): bin/planrun, bin/ollama, quickstart-25m/. The servers run in it."
}

variable "planrun" {
  type        = string
  default     = "bin/planrun"
  description = "The planrun binary on the nodes that runs the mock server: relative to tools, absolute, or a bare name looked up in PATH."
}

variable "ollama" {
  type        = string
  default     = "bin/ollama"
  description = "The ollama binary on the nodes (the quickstart's pinned build): relative to tools, absolute, or a bare name looked up in PATH."
}

variable "model_dir" {
  type        = string
  default     = "quickstart-25m"
  description = "The directory holding the model's Modelfile and tiny.gguf, as the quickstart writes it (relative to tools, or absolute); models and HOME go under it."
}

hardware "small" {
  gpu   = "mock"
  notes = "the mock server: known TTFT and TPOT, to check what a Slurm placement adds"
  slurm {
    partition = var.small_partition
    time      = "10:00"
  }
}

hardware "large" {
  gpu = "CPU (tiny model)"
  slurm {
    partition = var.large_partition
    time      = "20:00"
  }
}

server "mock" {
  command = [var.planrun, "mock-server", "-addr", "127.0.0.1:18000", "-ttft", "50ms", "-tpot", "5ms"]
  dir     = var.tools
  ready {
    url     = "http://127.0.0.1:18000/health"
    timeout = "30s"
  }
}

server "ollama" {
  command = [var.ollama, "serve"]
  dir     = var.tools
  # Relative to dir, as the commands are: the plan works from any clone's path.
  env = {
    OLLAMA_HOST   = "127.0.0.1:11501"
    OLLAMA_MODELS = "${var.model_dir}/models"
    HOME          = "${var.model_dir}/home"
    # Four requests decode together at concurrency 4.
    OLLAMA_NUM_PARALLEL = "4"
  }
  ready {
    url     = "http://127.0.0.1:11501/api/version"
    timeout = "60s"
  }
  setup = [[var.ollama, "create", "tiny", "-f", "${var.model_dir}/Modelfile"]]
}

backend "openai" "mock" {
  url    = "http://127.0.0.1:18000/v1"
  server = server.mock
}

backend "ollama" "tiny" {
  url          = "http://127.0.0.1:11501"
  server       = server.ollama
  ensure_model = "check"
  # One llama.cpp thread: with a thread per core (Ollama's default) on a 2-core node that
  # runs anything else, the threads wait on each other at every step (a TPOT of 310 ms
  # at concurrency 1 here at load 10-13, where one thread takes a few ms).
  extra_fields = { options = { num_thread = 1 } }
}

workload "quick" {
  prompt_tokens = 32
  max_tokens    = 32
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 8
  temperature   = 0
  seed          = 42
}

matrix "mock" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  hardware = [hardware.small]
  workload = [workload.quick]
}

matrix "tiny" {
  model    = ["tiny"]
  tool     = [backend.ollama.tiny]
  hardware = [hardware.large]
  workload = [workload.quick]
}

expect "no-errors" {
  condition     = result.error_rate == 0
  error_message = "Some requests failed: see the notes column and the job's log under the run directory's slurm/."
}

output "csv" {
  path = "../results/slurm/results.csv"
}

output "markdown" {
  path = "../results/slurm/results.md"
}

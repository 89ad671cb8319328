# A block or argument written in the wrong body is answered with where it belongs, from
# the schema, not with "not expected here"; a block written as an argument (or the
# reverse) is told which it is.
max_tokens = 64 # ERROR: Misplaced argument ~ The argument max_tokens belongs in a workload block, not at the top level of the plan.
server "vllm" {
  command = ["vllm", "serve", "m"]
  env { # ERROR: Unsupported block type ~ In a server block, env is an argument, not a block
    HF_HOME = "/tmp/hf"
  }
}
backend "openai" "v" {
  url    = "http://127.0.0.1:8000/v1"
  server = server.vllm
  ready { # ERROR: Misplaced block ~ A ready block belongs in a server block, not in a backend block.
    url = "http://127.0.0.1:8000/health"
  }
}
hardware "gpu0" {
  gpus = [0]
}
workload "chat" {
  prompt_tokens = 128
  hardware "a100" {} # ERROR: Misplaced block ~ A hardware block belongs at the top level of the plan, not in a workload block.
  agents { # ERROR: Misplaced block ~ An agents block belongs in a hardware block. In a workload block, agents is an argument
    hosts = ["h1", "h2"]
  }
  slo = { ttft_s = 1 } # ERROR: Unsupported argument ~ In a workload block, slo is a block, not an argument
  timeout = "30s" # ERROR: Unsupported argument ~ Did you mean "timeouts"? (the argument timeout belongs in a server's ready block.)
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  hardware = [hardware.gpu0]
  workload = [workload.chat]
  precision { # ERROR: Misplaced block ~ A precision block belongs in a workload block, not in a matrix block.
    ttft_p50 = "5%"
  }
}

# Values of the right type but the wrong kind: a URL where a host goes, a number where a
# duration goes, a level where an on/off switch goes, a file that is not there.
backend "ollama" "local" {
  url        = "localhost:11434" # ERROR: Invalid backend URL ~ did you mean "http://localhost:11434"?
  keep_alive = "10 min" # ERROR: Invalid keep_alive ~ Did you mean "10m"?
}
backend "ollama" "api" {
  url = "http://127.0.0.1:11434/api" # ERROR: Backend URL names an endpoint ~ Did you mean "http://127.0.0.1:11434"?
}
backend "openai" "endpoint" {
  url = "http://127.0.0.1:8000/v1/chat/completions" # ERROR: Backend URL names an endpoint ~ Did you mean "http://127.0.0.1:8000/v1"?
}
backend "openai" "twice" {
  url = "http://http://gpu2.lab:8000/v1" # ERROR: Invalid backend URL ~ did you mean "http://gpu2.lab:8000/v1"?
}
hardware "gpu1" {
  host = "http://gpu1.lab:11434" # ERROR: Invalid host ~ Did you mean host = "gpu1.lab:11434"?
}
hardware "gpu2" {
  host = "gpu2.lab/v1" # ERROR: Invalid host
}
server "vllm" {
  command = ["vllm", "serve", "m"]
  grace   = "30" # ERROR: Invalid duration ~ did you mean "30s" (seconds)?
  ready {
    url     = "http://127.0.0.1:8000/health"
    timeout = 600 # ERROR: Invalid duration ~ did you mean "600s" (seconds)?
  }
}
workload "think" {
  think = "high" # ERROR: Invalid think ~ write reasoning_effort = "high" instead
}
workload "prompt" {
  prompt_file = "../../../examples/data/trace.jsnol" # ERROR: Cannot read prompt_file ~ Did you mean "../../../examples/data/trace.jsonl"?
}
workload "ramp" {
  ramp = "2 seconds" # ERROR: Invalid duration ~ Did you mean "2s"?
}
dataset "t" {
  format = "mooncake"
  path   = "../../../examples/dta/trace.jsonl" # ERROR: Cannot read dataset ~ did you mean "../../../examples/data/trace.jsonl"?
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local, backend.openai.twice, backend.ollama.api, backend.openai.endpoint]
  hardware = [hardware.gpu1, hardware.gpu2]
  workload = [workload.think, workload.prompt, workload.ramp]
}
backend "openai" "extra" {
  url          = "http://127.0.0.1:8000/v1"
  extra_fields = {
    top_p  = 0.9
    stream = false # ERROR: Reserved request field ~ extra_fields may not set "stream"
  }
}

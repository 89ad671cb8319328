backend "taotoken" "gw" {
  extra_fields = { top_p = 1 } # ERROR: Unsupported argument
  headers      = { Authorization = "Bearer sk-abc" } # ERROR: Literal API key in plan
  api_key_env  = "sk-abcdef-123" # ERROR: Invalid api_key_env
}
backend "openai" "x" { # ERROR: Missing url
}
backend "ollama" "o" {
  engine_extensions = true # ERROR: Unsupported argument
  keep_alive        = "forever" # ERROR: Invalid keep_alive
  ensure_model      = "download" # ERROR: Invalid ensure_model
}
backend "openai" "v1" {
  url          = "http://127.0.0.1:11434/v1"
  ensure_model = "pull" # ERROR: Unsupported argument
}
server "s" {
  command     = [] # ERROR: Empty server command
  stop_signal = "SIGTERN" # ERROR: Invalid stop_signal
  grace       = "10 seconds" # ERROR: Invalid duration
  ready {
    url = "localhost:8000" # ERROR: Invalid ready URL
  }
}
workload "w" {
  prompt      = "hi"
  prompt_file = "p.txt" # ERROR: Conflicting arguments
  arrival     = "bursty" # ERROR: Invalid arrival
  repeat_runs = 0 # ERROR: Invalid repeat_runs
  colour      = 1 # ERROR: Unsupported argument
}
reference "r" {
  match  = { gpu = "x" } # ERROR: Invalid match key
  ttft_s = [2, 1] # ERROR: Invalid range
}
wrkload "x" { # ERROR: Unsupported block type
}

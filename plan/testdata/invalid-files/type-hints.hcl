# Values of the wrong shape, as people write them: a unit in a number whose name says
# the unit, one value where a list is asked, "Name: value" lines where a map is asked.
# Each error says what to write instead.
backend "openai" "v" {
  url     = "http://127.0.0.1:8000/v1"
  headers = ["X-Team: bench", "X-Run: 7"] # ERROR: Invalid headers ~ did you mean headers = { "X-Team" = "bench", "X-Run" = "7" }?
}
server "s" {
  command = ["vllm", "serve", "m"]
}
hardware "h" {
  vram_gb = "80 GB" # ERROR: Invalid vram_gb ~ vram_gb is a number of GB, without quotes or a unit (the name says the unit): did you mean vram_gb = 80?
  gpus    = 1 # ERROR: Invalid gpus ~ did you mean gpus = [1]?
  power {
    source  = "command"
    command = "ipmitool dcmi power reading" # ERROR: Invalid command ~ did you mean command = ["ipmitool", "dcmi", "power", "reading"]?
  }
}
workload "w" {
  concurrency = "1, 4, 16" # ERROR: Invalid concurrency ~ did you mean concurrency = [1, 4, 16]?
  max_tokens  = "many" # ERROR: Invalid max_tokens ~ max_tokens is a number, written without quotes.
  slo {
    ttft_s  = "500ms" # ERROR: Invalid ttft_s ~ did you mean ttft_s = 0.5?
    tpot_ms = "0.05s" # ERROR: Invalid tpot_ms ~ did you mean tpot_ms = 50?
    e2e_s   = "2 min" # ERROR: Invalid e2e_s ~ did you mean e2e_s = 120?
  }
}
matrix "m" {
  model        = ["m"]
  quantization = ["f16", "q8_0"]
  tool         = [backend.openai.v]
  hardware     = [hardware.h]
  workload     = [workload.w]
  server       = server.s
  quality {
    reference  = "f16"
    max_tokens = "16 tokens" # ERROR: Invalid max_tokens ~ max_tokens is a number, without quotes or a unit: did you mean max_tokens = 16?
  }
}

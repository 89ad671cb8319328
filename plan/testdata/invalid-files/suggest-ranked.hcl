# Suggestions beyond two edits: a locale code, a unit's long name, words in another
# order, a word added at the end, and other case or separators; never the whole list.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
hardware "box" {
  telemetry {
    process_exporter = "http://127.0.0.1:9256/metrics" # ERROR: Unsupported argument ~ Did you mean "process"?
  }
}
workload "w" {
  prompt_tokens = 16
  Max-Tokens    = 8 # ERROR: Unsupported argument ~ Did you mean "max_tokens"?
  slo {
    ttft_seconds = 2 # ERROR: Unsupported argument ~ Did you mean "ttft_s"?
    e2e_s        = 10
  }
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  hardware = [hardware.box]
  workload = [workload.w]
}
expect "bounded" {
  condition = result.ttft_p99_hi_s < 3 # ERROR: Unknown result value ~ Did you mean "ttft_p99_s_hi"?
}
expect "unknown" {
  condition = result.bananas < 3 # ERROR: Unknown result value ~ The figures are listed in docs/plan.md
}
output "markdown" {
  path     = "out.md"
  language = "zh-CN" # ERROR: Invalid language ~ Did you mean "zh"?
}

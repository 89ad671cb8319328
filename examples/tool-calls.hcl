# Tool calls timed: every request offers two tools; the row gives the share of answers
# that called one (tool_call_rate_pct, with its interval), the share of those whose
# arguments parse as JSON and match the tool's schema (tool_call_valid_pct), and the
# time to each call's first part and to the call complete (tool_call_first_*,
# tool_call_done_*), on OpenAI chat (delta.tool_calls), the Messages API (tool_use
# with input_json_delta) or Ollama (message.tool_calls, sent whole). On the mock, which
# answers half the auto requests with a call whose tokens are its arguments:
#
#   planrun mock-server -ttft 100ms -tpot 10ms -tool-call-rate 0.5 &
#   planrun apply examples/tool-calls.hcl
#
# On vLLM, tool_choice = "required" (or a tool's name) forces a well-formed call even
# from a random model (guided decoding); "auto" needs --enable-auto-tool-choice and a
# --tool-call-parser. Ollama takes tools but no tool_choice.

variable "url" {
  description = "The server's OpenAI-compatible base URL, ending in /v1."
  type        = string
  default     = "http://127.0.0.1:8000/v1"
}

variable "model" {
  type    = string
  default = "mock"
}

variable "tool_choice" {
  description = "auto, required, none, or a tool's name."
  type        = string
  default     = "auto"
}

backend "openai" "server" { url = var.url }
backend "anthropic" "server" { url = var.url }

workload "tools" {
  prompt_tokens = 64
  max_tokens    = 24
  concurrency   = [1, 4]
  requests      = 20
  warmup_runs   = 1
  repeat_runs   = 2
  tool "get_weather" {
    description = "The current weather at a city"
    parameters = {
      type       = "object"
      properties = { city = { type = "string" }, unit = { type = "string", enum = ["celsius", "fahrenheit"] } }
      required   = ["city"]
    }
  }
  tool "get_time" {
    description = "The local time at a city"
    parameters  = { type = "object", properties = { city = { type = "string" } } }
  }
  tool_choice = var.tool_choice
}

matrix "tools" {
  model    = [var.model]
  tool     = [backend.openai.server, backend.anthropic.server]
  workload = [workload.tools]
  model_id = matrix.model
}

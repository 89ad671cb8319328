# Agent loops: each session turn is a task the model works through by calling tools.
# planrun answers every call with a tool result (here 200 tokens of text, after a tool
# latency drawn per call) and sends the next step, carrying the assistant's calls and
# the results in each protocol's shape, until the model answers without a call or the
# task has taken max_steps requests. The row gives per task the steps, the task time,
# the time in tools against the time in the model, and the share of its prompt tokens
# the server's prefix cache served (agent_* columns); summary.json adds each step's
# TTFT, prompt and cached tokens. On the mock, scripted to call a tool three times and
# then answer, with a prefix cache that bills each step's prompt for its new words alone:
#
#   planrun mock-server -ttft 50ms -tpot 5ms -tool-calls 3 -prefix-cache -prefill-per-token 100us &
#   planrun apply examples/agent-loop.hcl
#
# On vLLM (0.32 here), tool_choice = "required" or a tool's name forces a call from any
# model by guided decoding, but the server must run with --enable-auto-tool-choice and
# --tool-call-parser (any, e.g. hermes); such a loop runs to max_steps, as nothing lets a
# forced model stop. Ollama takes tools but no tool_choice: the model
# decides. With a results_file (JSON Lines of {"tool": "<name>", "content": "<text>"})
# in place of result_tokens, each call gets a result drawn from the file for its tool.

variable "url" {
  description = "The server's OpenAI-compatible base URL, ending in /v1."
  type        = string
  default     = "http://127.0.0.1:8000/v1"
}

variable "model" {
  type    = string
  default = "mock"
}

backend "openai" "server" { url = var.url }
backend "anthropic" "server" { url = var.url }

workload "agent" {
  prompt_tokens = 256
  max_tokens    = 32
  concurrency   = [2]
  warmup_runs   = 0
  repeat_runs   = 2
  tool "read_file" {
    description = "Read a file of the repository"
    parameters = {
      type       = "object"
      properties = { path = { type = "string" } }
      required   = ["path"]
    }
  }
  tool_choice = "auto"
  session {
    turns    = 2
    sessions = 4
    agent {
      max_steps       = 8
      tool_latency_ms = lognormal(4, 0.5, 20, 500) # about 60 ms, most between 20 and 150
      result_tokens   = 200
    }
  }
}

matrix "agent" {
  model    = [var.model]
  tool     = [backend.openai.server, backend.anthropic.server]
  workload = [workload.agent]
  model_id = matrix.model
}

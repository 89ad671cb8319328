# Replay of recorded agent tasks: SWE-agent trajectories (.traj, documented at
# https://swe-agent.com/latest/usage/trajectories/). Each step of a trajectory is one
# model call: planrun sends the messages the recorded agent sent at that step (its
# "query": the system prompt, the task, and every earlier tool call with its result),
# whatever the model now answers, then waits the recorded tool's "execution_time"
# before the next step. So the prompts grow as they did for the recorded agent, and the
# agent_* columns say how much of them the server's prefix cache served, and how the
# task's time splits between tools and the model. Each session replays one trajectory
# (in turn, if there are several) behind a marker of its own, so sessions share no
# prefix with each other. examples/data/swe-agent/fix-parse-date.traj is a small
# hand-written task in that format (four calls of a bash tool, the last one submits).
# On the mock, with its prefix cache:
#
#   planrun mock-server -ttft 50ms -tpot 5ms -prefix-cache -prefill-per-token 100us &
#   planrun apply examples/agent-replay.hcl

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

workload "replay" {
  max_tokens  = 32
  concurrency = [4]
  warmup_runs = 0
  repeat_runs = 2
  session {
    turns    = 1
    sessions = 4
    agent {
      max_steps    = 16
      trajectories = "data/swe-agent/*.traj"
    }
  }
}

matrix "replay" {
  model    = [var.model]
  tool     = [backend.openai.server, backend.anthropic.server]
  workload = [workload.replay]
  model_id = matrix.model
}

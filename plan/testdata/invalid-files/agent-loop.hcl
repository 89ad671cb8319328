# An agent loop: its steps, its tool's latency and results, and the tools it answers.
backend "openai" "o" { url = "http://127.0.0.1:8000/v1" }
workload "a" {
  tool "search" {}
  session {
    turns = 1
    agent {
      max_steps       = 0 # ERROR: Invalid max_steps
      tool_latency_ms = -5 # ERROR: Invalid tool_latency_ms
      result_tokens   = 8
      results_file    = "agent-results.jsonl" # ERROR: Conflicting arguments
      max_step        = 3 # ERROR: Unsupported argument ~ Did you mean "max_steps"?
    }
  }
}
workload "b" {
  session {
    turns = 1
    agent { # ERROR: Agent loop without tools
      max_steps = 4
    }
  }
}
workload "c" {
  tool "search" {}
  tool_choice = "none"
  session {
    turns = 1
    agent { # ERROR: Agent loop without tool calls
      max_steps = 4
    }
    agent { # ERROR: Duplicate agent block
      max_steps = 4
    }
  }
}
workload "d" {
  tool "search" {}
  session {
    turns = 1
    agent {
      max_steps     = 4
      results_file  = "agent-results-bad.jsonl" # ERROR: Invalid results_file ~ line 2: the workload offers no tool "serch"
    }
  }
}
workload "e" {
  tool "search" {}
  session {
    turns = 1
    agent {
      max_steps     = 4
      result_tokens = "dataset" # ERROR: Invalid result_tokens
    }
  }
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.o]
  workload = [workload.a, workload.b, workload.c, workload.d, workload.e]
}
workload "f" {
  session {
    turns = 2
    agent {
      max_steps       = 4
      trajectories    = "../../../examples/data/swe-agent/*.traj" # ERROR: Replay of more than one turn
      tool_latency_ms = 5 # ERROR: Conflicting arguments
    }
  }
}
workload "g" {
  session {
    turns = 1
    agent {
      max_steps    = 4
      trajectories = "nowhere/*.traj" # ERROR: No trajectories
    }
  }
}
workload "h" {
  session {
    turns = 1
    agent {
      max_steps    = 4
      trajectories = "agent-results.jsonl" # ERROR: Invalid trajectory
    }
  }
}
matrix "r" {
  model    = ["a"]
  tool     = [backend.openai.o]
  workload = [workload.f, workload.g, workload.h]
}

backend "openai" "chat" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "bare" {
  url = "http://127.0.0.1:8000/v1"
  api = "completions"
}
workload "zero" {
  session {
    turns      = 0 # ERROR: Invalid turns
    think_time = "-1s" # ERROR: Invalid duration
    sessions   = 0 # ERROR: Invalid sessions
  }
}
workload "open" {
  request_rate  = 2 # ERROR: Conflicting arguments
  shared_prefix = true # ERROR: Conflicting arguments
  requests      = 8 # ERROR: Conflicting arguments
  session {
    turns = 2
  }
}
workload "twice" {
  session {
    turns = 2
  }
  prefix { # ERROR: Conflicting blocks
    tokens = 8
  }
  session { # ERROR: Duplicate session block
    turns = 3
  }
}
workload "chat" {
  session { # ERROR: Session on a prompt-only endpoint
    turns      = 3
    think_time = "1s"
  }
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.chat, backend.openai.bare]
  workload = [workload.chat]
}
backend "ollama" "gen" {
  api = "generate"
}
matrix "o" {
  model    = ["m"]
  tool     = [backend.ollama.gen]
  workload = [workload.plain]
}
workload "plain" {
  session { # ERROR: Session on a prompt-only endpoint
    turns = 2
  }
}

# A tool results file whose lines do not decode is told where and why in a user's words,
# not the JSON decoder's ("invalid character 'o' in literal null").
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
workload "broken" {
  tool "read" {
    parameters = { type = "object" }
  }
  session {
    turns = 1
    agent {
      max_steps    = 4
      results_file = "agent-results-broken.jsonl" # ERROR: Invalid results_file ~ line 2: it is not valid JSON (it breaks off at byte 2 of the line). Each line is
    }
  }
}
workload "number" {
  tool "read" {
    parameters = { type = "object" }
  }
  session {
    turns = 1
    agent {
      max_steps    = 4
      results_file = "agent-results-number.jsonl" # ERROR: Invalid results_file ~ line 1: its "content" is a JSON number, not a string. Each line is
    }
  }
}
workload "array" {
  tool "read" {
    parameters = { type = "object" }
  }
  session {
    turns = 1
    agent {
      max_steps    = 4
      results_file = "agent-results-array.jsonl" # ERROR: Invalid results_file ~ line 1: it is a JSON array, not an object. Each line is
    }
  }
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.broken, workload.number, workload.array]
}

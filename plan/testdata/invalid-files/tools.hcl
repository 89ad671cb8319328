# A workload's tools: a choice among them, each tool once, its schema an object.
workload "a" {
  tool "f" {}
  tool "f" {} # ERROR: Duplicate tool
  tool_choice = "requierd" # ERROR: Invalid tool_choice ~ Did you mean "required"?
}
workload "b" {
  tool_choice = "auto" # ERROR: tool_choice without tools
}
workload "c" {
  tool "g" {
    parameters = "object" # ERROR: Invalid parameters
  }
}
workload "d" {
  tool "h" {
    parameters      = { type = "object" }
    parameters_file = "schema.json" # ERROR: Conflicting arguments
  }
}
backend "openai" "o" { url = "http://127.0.0.1:8000/v1" }
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.o]
  workload = [workload.a, workload.b, workload.c, workload.d]
}

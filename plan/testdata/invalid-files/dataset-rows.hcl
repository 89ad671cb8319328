# A dataset's file is read by validate as apply will read it (when it is small enough):
# a row apply would stop on is an error at the dataset's path, naming file:line.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
dataset "broken" {
  format = "jsonl"
  path   = "dataset-rows-broken.jsonl" # ERROR: Invalid dataset ~ dataset-rows-broken.jsonl:2: not a JSON object
}
dataset "field" {
  format = "jsonl"
  path   = "dataset-rows-field.jsonl" # ERROR: Invalid dataset ~ did you mean prompt_field = "text"?
}
dataset "named" { # the field named: no error
  format       = "jsonl"
  path         = "dataset-rows-field.jsonl"
  prompt_field = "text"
}
dataset "trace" {
  format = "mooncake"
  path   = "dataset-rows-trace.jsonl" # ERROR: Invalid dataset ~ dataset-rows-trace.jsonl:2:
}
dataset "long" {
  format           = "jsonl"
  path             = "../../../examples/data/prompts.jsonl" # ERROR: Invalid dataset ~ no usable row
  min_prompt_words = 1000
}
workload "w" {
  dataset = dataset.named
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}

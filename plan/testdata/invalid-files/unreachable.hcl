# Plans whose rows would say something that never happened: a level the requests cannot
# fill, a measure the workload never has, an output that cannot be a file.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
backend "openai" "e" {
  url = "http://127.0.0.1:8000/v1"
  api = "embeddings"
}
workload "few" {
  concurrency = [1, 4, 16]
  requests    = 8 # ERROR: Fewer requests than the concurrency ~ concurrency lists 16
}
workload "paced" {
  concurrency  = [16]
  requests     = 8
  request_rate = 2
}
workload "talk" {
  concurrency = [8]
  session {
    turns    = 3
    sessions = 2 # ERROR: Fewer sessions than the concurrency
  }
}
workload "emb" {
  measure = ["ttft", "vram"] # ERROR: Unmeasurable measure ~ embeddings block
  embeddings {
    inputs = [4]
  }
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v]
  workload = [workload.few, workload.paced, workload.talk]
}
matrix "n" {
  model    = ["bge"]
  tool     = [backend.openai.e]
  workload = [workload.emb]
}
output "csv" {
  path = "results/" # ERROR: Output path is a directory ~ Did you mean "results/results.csv"?
}

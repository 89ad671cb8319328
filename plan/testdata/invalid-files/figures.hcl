# Figures a workload never has, asked for by an slo, a goal, an expect or a capacity
# search: one table (plan/figures.go) says which workload has which figure.
backend "openai" "embed" {
  url = "http://127.0.0.1:8000/v1"
  api = "embeddings"
}
backend "openai" "chat" {
  url = "http://127.0.0.1:8000/v1"
}
workload "emb" {
  embeddings {
    inputs = [1, 8]
  }
  slo {
    ttft_s = 1 # ERROR: Unmeasurable SLO ~ embeddings block
    e2e_s  = 2
  }
}
workload "emb_goal" {
  goal = result.output_tok_s > 10 # ERROR: Unmeasurable goal ~ generates no tokens
  embeddings {}
}
workload "closed" {
  goal = result.send_lag_p99_ms < 5 # ERROR: Unmeasurable goal ~ closed loop
}
workload "no_slo" {
  goal = result.goodput_requests_s > 1 # ERROR: Unmeasurable goal ~ no slo block
}
workload "chat" {
  concurrency = [1, 4]
}
workload "unstreamed" {
  stream = false
}
matrix "m" {
  model    = ["bge"]
  tool     = [backend.openai.embed]
  workload = [workload.emb, workload.emb_goal]
}
matrix "g" {
  model    = ["qwen"]
  tool     = [backend.openai.chat]
  workload = [workload.chat, workload.closed, workload.no_slo, workload.unstreamed]
}
expect "fast" {
  condition = result.ttft_p99_s < 1 # ERROR: Unmeasurable condition ~ workload "emb_goal" never has it: it has an embeddings block
}
expect "gen-only" {
  cells     = ["g/*"]
  condition = (result.ttft_p99_s < 1 && # ERROR: Unmeasurable condition ~ workload "unstreamed" never has it: it sets stream = false
  result.inputs_s > 0) # ERROR: Unmeasurable condition ~ workload "closed" never has it: it has no embeddings block
}
expect "emb-only" {
  cells     = ["m/*"]
  condition = result.inputs_s > 10 && result.e2e_p99_s < 2
}

# A plan-managed vLLM whose command line cannot serve what its cells ask: errors where
# vLLM certainly refuses the requests (warnings, where it is a judgement, are tested in
# servercheck_test.go).
backend "openai" "plain" {
  url    = "http://127.0.0.1:8000/v1"
  server = server.plain
}
backend "openai" "short" {
  url    = "http://127.0.0.1:8001/v1"
  server = server.short
}
backend "openai" "lora" {
  url    = "http://127.0.0.1:8002/v1"
  server = server.lora
}
server "plain" {
  command = ["vllm", "serve", "Qwen/Qwen2.5-7B", "--served-model-name", "base"] # ERROR: Server cannot serve the model mix ~ has no --enable-lora
}
server "short" {
  command = "vllm" # ERROR: Requests longer than --max-model-len ~ up to 2048 prompt + 256 output tokens
  args    = ["serve", "m", "--max-model-len=2k", "--port", "8001"]
}
server "lora" {
  command = ["vllm", "serve", "m", "--served-model-name", "base", "--port", "8002", "--enable-lora", "--lora-modules", "sql=/ad/sql", "chat=/ad/chat"]
}
workload "mix" {
  models = { base = 2, sql = 1, chat = 1 }
}
workload "long" {
  prompt_tokens = uniform(512, 2048)
}
matrix "m" {
  model    = ["base"]
  tool     = [backend.openai.plain, backend.openai.lora]
  workload = [workload.mix]
}
matrix "s" {
  model    = ["m"]
  tool     = [backend.openai.short]
  workload = [workload.long]
}

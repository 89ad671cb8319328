# Hardware pins restrict a server planrun starts: pins on a cell without one, a server
# env that overrides them, and a server that spans more GPUs than pinned are refused by
# validate, not found by apply after the server has started.
server "tp2" {
  command = ["vllm", "serve", "m", "--tensor-parallel-size", "2"]
}
server "own_gpu" {
  command = ["vllm", "serve", "m", "--port", "8001"]
  env = {
    HF_HOME              = "/tmp/hf"
    CUDA_VISIBLE_DEVICES = "1" # ERROR: Server env overrides the hardware's pins ~ Hardware "gpu0" pins gpus (CUDA_VISIBLE_DEVICES=0)
  }
}
server "same_gpu" {
  command = ["vllm", "serve", "m", "--port", "8002"]
  env     = { CUDA_VISIBLE_DEVICES = "0" } # the same as the pins: no override
}
backend "openai" "tp2" {
  url    = "http://127.0.0.1:8000/v1"
  server = server.tp2
}
backend "openai" "own_gpu" {
  url    = "http://127.0.0.1:8001/v1"
  server = server.own_gpu
}
backend "openai" "same_gpu" {
  url    = "http://127.0.0.1:8002/v1"
  server = server.same_gpu
}
backend "openai" "remote" {
  url = "http://10.0.0.5:8000/v1"
}
hardware "gpu0" {
  gpus = [0] # ERROR: Server spans more GPUs than pinned ~ tensor-parallel size of 2
}
hardware "cores" {
  cpus = "0-3" # ERROR: Pins without a server ~ Backend openai.remote has no server block
}
workload "w" {
  prompt_tokens = 16
}
matrix "gpu" {
  model    = ["m"]
  tool     = [backend.openai.tp2, backend.openai.own_gpu, backend.openai.same_gpu]
  hardware = [hardware.gpu0]
  workload = [workload.w]
}
matrix "cpu" {
  model    = ["m"]
  tool     = [backend.openai.remote]
  hardware = [hardware.cores]
  workload = [workload.w]
}

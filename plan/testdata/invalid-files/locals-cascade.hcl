locals {
  base  = nosuch("x") # ERROR: Call to unknown function
  url   = "${local.base}/v1"
  model = upper(local.base)
}
backend "openai" "vllm" {
  url = local.url
}
workload "w" {
  prompt = local.model
}
matrix "m" {
  model    = [local.model, "b"]
  tool     = [backend.openai.vllm]
  workload = [workload.w]
  model_id = "${local.base}/${matrix.model}"
  exclude {
    model = "b"
  }
}

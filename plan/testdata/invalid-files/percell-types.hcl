backend "ollama" "local" {}
server "s" {
  command = ["x"]
}
workload "w" {}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  model_id = matrix.model == "a" ? matrix.model : ["list"] # ERROR: Inconsistent conditional result types
  notes    = { n = 1 } # ERROR: Invalid notes
  server   = "s"
}
matrix "n" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
  server   = matrix.model # ERROR: Invalid server reference
}

# Every independent mistake in one run: a misspelt matrix.* attribute in a per-cell
# expression is reported beside the matrix's other errors, not hidden by them.
backend "ollama" "o" {}
hardware "h" {}
workload "w" {}
matrix "hw" {
  model    = ["a"]
  tool     = [backend.ollama.o]
  hardware = [hardware.hh] # ERROR: Reference to undeclared hardware
  workload = [workload.w]
  model_id = matrix.tool.knd == "ollama" ? "x" : "y" # ERROR: Unsupported attribute
}
matrix "ex" {
  model    = ["a"]
  tool     = [backend.ollama.o]
  hardware = [hardware.h]
  workload = [workload.w]
  notes    = matrix.hardware.gpuu # ERROR: Unsupported attribute
  server   = matrix.workload.nme # ERROR: Unsupported attribute
  exclude {
    model = "b" # ERROR: Exclude matches nothing
  }
}
matrix "ok" {
  model    = ["a"]
  tool     = [backend.ollama.o]
  workload = [workload.w, workload.x] # ERROR: Reference to undeclared workload
  model_id = "${matrix.tool.kind}-${matrix.workload.max_tokens}"
  notes    = matrix.hardware == null ? "" : "x"
}

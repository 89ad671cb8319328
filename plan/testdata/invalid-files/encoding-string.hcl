backend "ollama" "local" {}
workload "w" {
  prompt = "Grüße" # ERROR: Invalid file encoding ~ byte 0xfc at offset 57 (line 3, column 15)
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}

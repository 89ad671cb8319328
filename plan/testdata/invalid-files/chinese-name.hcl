# A block named in Chinese: HCL takes any letter in a name, but a plan is ASCII outside
# strings, so the name could never be referenced. The name is refused where it is
# declared, with where the words can go; the reference is named as characters.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
workload "长文本" { # ERROR: Invalid name ~ put the words you meant in a description or notes string
  requests = 8
}
workload "short" {
  requests = 8
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.short, workload.长文本] # ERROR: Non-ASCII character ~ "长" (U+957F)
}

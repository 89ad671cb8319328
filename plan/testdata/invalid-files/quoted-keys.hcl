# A map key with dots, slashes or dashes between names (a Kubernetes resource, a label,
# a header) is read as an expression unless quoted: say to quote it, once, instead of
# "There is no variable named ...".
variable "trace_header" {
  type    = string
  default = "x-trace"
}
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
  headers = {
    x-request-id         = "planrun"
    (var.trace_header)   = "on"
    example.com/tenant   = "lab" # ERROR: Key needs quotes ~ Quote it: "example.com/tenant" = …
  }
}
hardware "pod" {
  kubernetes {
    image = "planrun:dev"
    labels = {
      "app.kubernetes.io/name" = "planrun"
      app.kubernetes.io/part-of = "bench" # ERROR: Key needs quotes ~ (app.kubernetes.io divided by part-of)
    }
    resources {
      limits = { nvidia.com/gpu = 1 } # ERROR: Key needs quotes ~ The key nvidia.com/gpu is read as an expression (nvidia.com divided by gpu)
    }
  }
}
workload "w" {
  prompt_tokens = 16
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  hardware = [hardware.pod]
  workload = [workload.w]
}

backend "openai" "gw" {
  url = "http://gateway.lab:8000/v1"
}
hardware "shared" {
  kubernetes {
    image = "planrun:dev"
    jobs  = "per_hardware" # ERROR: Agents in a shared Kubernetes Job
  }
}
hardware "own" {
  kubernetes {
    image = "planrun:dev"
  }
}
workload "three" {
  agents      = 3
  concurrency = [30]
}
workload "one" {
  concurrency = [30]
}
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.gw]
  hardware = [hardware.shared, hardware.own]
  workload = [workload.three, workload.one]
}

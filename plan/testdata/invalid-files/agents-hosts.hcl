backend "openai" "gw" {
  url = "http://gateway.lab:8000/v1"
}
hardware "clients" {
  agents {
    hosts = ["c1", "c2"] # ERROR: Agents and hosts differ
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
  hardware = [hardware.clients]
  workload = [workload.three, workload.one]
}

# A workload shared by load agents: on this machine, each on its own source address,
# and on hosts reached through ssh; the same workload with agents = 1 runs as before.
backend "openai" "gw" {
  url = "http://gateway.lab:8000/v1"
}

hardware "here" {
  agents {
    source_addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
  }
}
hardware "clients" {
  agents {
    hosts        = ["client-a", "client-b", "client-c", "client-d"]
    ssh          = ["ssh", "-o", "BatchMode=yes", "-l", "bench"]
    planrun_path = "/opt/planrun/bin/planrun"
    lead         = "10.0.0.5"
  }
}

workload "fleet" {
  agents       = 4
  concurrency  = [64, 256]
  request_rate = [200, 800]
  max_tokens   = 64
}

workload "single" {
  concurrency = [1]
}

matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.gw]
  hardware = [hardware.here, hardware.clients]
  workload = [workload.fleet, workload.single]
}

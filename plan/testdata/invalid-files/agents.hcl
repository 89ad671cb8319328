workload "zero" {
  agents = 0 # ERROR: Invalid agents
}
workload "many" {
  agents = 5000 # ERROR: Invalid agents
}
workload "slots" {
  agents      = 4
  concurrency = [8, 2] # ERROR: Fewer slots than agents
}
workload "cap" {
  agents       = 3
  concurrency  = [2] # ERROR: Fewer slots than agents
  request_rate = [50]
}
workload "requests" {
  agents      = 4 # ERROR: Fewer requests than agents
  concurrency = [4]
  requests    = 3 # ERROR: Fewer requests than the concurrency
}
workload "capacity" {
  agents      = 2
  concurrency = [2, 8]
  slo {
    ttft_s = 0.5
  }
  capacity { # ERROR: Capacity search over concurrency with agents
    target_attainment_pct = 90
  }
}
workload "sessions" {
  agents      = 4
  concurrency = [2] # ERROR: Fewer slots than agents
  session {
    turns    = 2
    sessions = 3 # ERROR: Fewer sessions than agents
  }
}
hardware "jobs" {
  slurm {
    partition = "small"
  }
  agents {
    hosts = ["c1", "c2"] # ERROR: Conflicting placement
  }
}
hardware "fleet" {
  agents {
    hosts = [
      "c1",
      "http://c2", # ERROR: Invalid host
      "c1",        # ERROR: Duplicate host
    ]
    ssh              = [] # ERROR: Invalid ssh
    coordinator      = "" # ERROR: Invalid coordinator
    source_addresses = ["127.0.0.2", "localhost"] # ERROR: Invalid source address
    nodes            = 2 # ERROR: Unsupported argument
  }
}
hardware "pods" {
  kubernetes {
    image = "planrun:dev"
  }
  agents {
    hosts       = ["c1", "c2"] # ERROR: Conflicting placement
    coordinator = "10.0.0.5"   # ERROR: Conflicting placement
  }
}

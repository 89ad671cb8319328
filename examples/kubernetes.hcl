# Cells where the cluster is: every cell runs as a Kubernetes Indexed Job whose pod runs
# planrun on the cell, with the cell's server started in the pod. Each pod's rows and requests
# come back through the Kubernetes API (the pod's log) into the one ledger and run directory,
# naming the Job, the pod and the node.
#
# The defaults match the single-node cluster of scripts/k8s-cluster.sh (context and
# namespace "planrun", the agent image planrun:dev it imports, host-network pods). As root:
#
#   scripts/k8s-cluster.sh start
#   go run ./cmd/planrun apply examples/kubernetes.hcl
#
# The same plan on this machine, to hold the pod's figures against (-run-dir runs every cell
# here, as a pod does, into that directory; the mock's planrun is the one the script built):
#
#   go run ./cmd/planrun apply -run-dir results/kubernetes-here -var planrun=$PWD/.tools/k8s/agent/planrun examples/kubernetes.hcl
#   go run ./cmd/planrun compare results/kubernetes-here results/kubernetes
#
# The "fleet" cell's workload has two load agents: its Indexed Job has two pods, index 0 runs
# the cell (and agent 0), index 1 is agent 1, which finds index 0 through the Job's headless
# Service and the cluster's DNS. Here both pods share the node's network, so agent 1 reaches
# the mock server index 0 starts on 127.0.0.1; on a cluster of several nodes, the agents'
# backend is a server every node reaches (a Service).
#
# On your own cluster: build and push the agent image (`planrun image`, or the Dockerfile),
# set image, context and namespace, and point the backend at your server's Service.
# `planrun plan -k8s-manifest cluster examples/kubernetes.hcl` prints the objects for review.

variable "context" {
  type        = string
  default     = "planrun"
  description = "The kubeconfig context to run the cluster cells in."
}

variable "namespace" {
  type        = string
  default     = "planrun"
  description = "Where the Jobs and ConfigMaps go."
}

variable "image" {
  type        = string
  default     = "planrun:dev"
  description = "The planrun agent image (scripts/k8s-cluster.sh start imports planrun:dev built from this checkout)."
}

variable "image_pull_policy" {
  type        = string
  default     = "Never"
  description = "Never: the image is on the node already (imported with ctr); IfNotPresent on a cluster with a registry."
}

variable "planrun" {
  type        = string
  default     = "planrun"
  description = "The planrun that runs the mock server: in the pod, the image's own (on its PATH)."
}

hardware "cluster" {
  gpu   = "mock"
  notes = "an Indexed Job's pod; the mock server runs in the pod"
  kubernetes {
    context           = var.context
    namespace         = var.namespace
    image             = var.image
    image_pull_policy = var.image_pull_policy
    host_network      = true
    labels            = { team = "bench" }
    resources {
      requests = { cpu = "250m", memory = "128Mi" }
      limits   = { memory = "1Gi" }
    }
    start_timeout = "2m"
  }
}

server "mock" {
  command = [var.planrun, "mock-server", "-addr", "127.0.0.1:18210", "-ttft", "50ms", "-tpot", "5ms"]
  ready {
    url     = "http://127.0.0.1:18210/health"
    timeout = "30s"
  }
}

backend "openai" "mock" {
  url    = "http://127.0.0.1:18210/v1"
  server = server.mock
}

# The fleet cell's own mock, on its own port: the cells' Jobs run at once, on one node's
# network here.
server "mock-fleet" {
  command = [var.planrun, "mock-server", "-addr", "127.0.0.1:18211", "-ttft", "50ms", "-tpot", "5ms"]
  ready {
    url     = "http://127.0.0.1:18211/health"
    timeout = "30s"
  }
}

backend "openai" "fleet" {
  url    = "http://127.0.0.1:18211/v1"
  server = server.mock-fleet
}

workload "quick" {
  prompt_tokens = 32
  max_tokens    = 32
  concurrency   = [1, 4]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 8
  temperature   = 0
  seed          = 42
}

workload "fleet" {
  agents        = 2 # the two pods of the cell's Indexed Job send each level
  prompt_tokens = 32
  max_tokens    = 32
  concurrency   = [4]
  warmup_runs   = 1
  repeat_runs   = 3
  requests      = 16
  temperature   = 0
  seed          = 42
}

matrix "cluster" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  hardware = [hardware.cluster]
  workload = [workload.quick]
}

matrix "fleet" {
  model    = ["mock"]
  tool     = [backend.openai.fleet]
  hardware = [hardware.cluster]
  workload = [workload.fleet]
}

expect "no-errors" {
  condition     = result.error_rate == 0
  error_message = "Some requests failed: see the notes column and the pod's log under the run directory's kubernetes/."
}

output "csv" {
  path = "../results/kubernetes/results.csv"
}

output "markdown" {
  path = "../results/kubernetes/results.md"
}

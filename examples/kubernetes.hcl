# Cells where the cluster is: the "cluster" cells run as Kubernetes Indexed Jobs whose pods
# run planrun on the cell, next to the server; the "here" cells run the same workload on
# this machine, so the report sets the two side by side. Each pod's rows and requests come
# back through the Kubernetes API (the pod's log) into the one ledger and run directory.
#
# The defaults match the single-node cluster of scripts/k8s-cluster.sh (context and
# namespace "planrun", the agent image planrun:dev it imports, host-network pods). As root:
#
#   scripts/k8s-cluster.sh start
#   go run ./cmd/planrun apply examples/kubernetes.hcl
#
# On your own cluster: build and push the agent image (`planrun image`, or the Dockerfile),
# set image, context and namespace, and point the backend at your server's Service.
# `planrun plan -k8s-manifest cluster examples/kubernetes.hcl` prints the Job for review.

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

variable "tools" {
  type        = string
  default     = "../.tools/k8s"
  description = "Where scripts/k8s-cluster.sh leaves the planrun it builds for the image (relative to this plan's directory); the mock server of the cells here runs in it."
}

variable "planrun" {
  type        = string
  default     = "agent/planrun"
  description = "The planrun that runs the mock server of the cells here: relative to tools, absolute, or a bare name looked up in PATH (in the pods, the image's own)."
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

hardware "here" {
  gpu   = "mock"
  notes = "this machine: the same workload, for comparison"
}

server "mock_pod" {
  command = ["planrun", "mock-server", "-addr", "127.0.0.1:18210", "-ttft", "50ms", "-tpot", "5ms"]
  ready {
    url     = "http://127.0.0.1:18210/health"
    timeout = "30s"
  }
}

server "mock_here" {
  command = [var.planrun, "mock-server", "-addr", "127.0.0.1:18211", "-ttft", "50ms", "-tpot", "5ms"]
  dir     = var.tools
  ready {
    url     = "http://127.0.0.1:18211/health"
    timeout = "30s"
  }
}

backend "openai" "pod" {
  url    = "http://127.0.0.1:18210/v1"
  server = server.mock_pod
}

backend "openai" "here" {
  url    = "http://127.0.0.1:18211/v1"
  server = server.mock_here
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

matrix "cluster" {
  model    = ["mock"]
  tool     = [backend.openai.pod]
  hardware = [hardware.cluster]
  workload = [workload.quick]
}

matrix "here" {
  model    = ["mock"]
  tool     = [backend.openai.here]
  hardware = [hardware.here]
  workload = [workload.quick]
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

#!/usr/bin/env bash
# planrun's test command, run as root: installs the Debian packages the tests need
# (scripts/install-system.sh), builds the pinned Ollama, installs the pinned vLLM CPU build and
# LiteLLM proxy that the integration tests run against and builds the Kubernetes test cluster
# (only the first time: about half an hour on 2 cores, README.md), then checks formatting, vets
# and tests every package. Extra arguments go to `go test` (e.g. scripts/test.sh -race -v).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { echo "test.sh: $*" >&2; }

# Every integration test is required here, and the Slurm, Kubernetes and SSH ones start daemons
# as root: not root, they would fail after the whole run, so say it now.
if [[ $(id -u) -ne 0 ]]; then
  step "not root: the Slurm, Kubernetes and SSH tests start their daemons as root, and this command"
  step "requires every integration test. Run it as root (sudo scripts/test.sh), or run"
  step "go test ./... for the tests this user can run (the others skip, naming what they need)."
  exit 1
fi

step "installing the Debian packages the tests need, if missing (scripts/install-system.sh)"
scripts/install-system.sh
step "installing the pinned Ollama into .tools/bin (scripts/install-ollama.sh)"
scripts/install-ollama.sh
step "installing the pinned vLLM CPU build into .tools/vllm-venv (scripts/install-vllm.sh)"
scripts/install-vllm.sh
step "installing the pinned LiteLLM proxy into .tools/litellm (scripts/install-litellm.sh)"
scripts/install-litellm.sh

# go-nvml's header warns about deprecated declarations on every cgo build; they are not ours.
export CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations"
# Every integration test runs: with PLANRUN_INTEGRATION set, one whose engine, Slurm or
# Chromium is missing fails instead of skipping (internal/testkit/realserver), so none vanishes here.
export PLANRUN_INTEGRATION=1
# The integration tests find .tools/bin/ollama themselves; a developer's OLLAMA_HOST must not
# point them at another server (they start their own on free loopback ports).
unset OLLAMA_HOST

# The Slurm and Kubernetes tests start their test clusters (as root) when they are not up;
# each test process stops a cluster when it ends last, and this stops them too if the tests
# were cut short. A cluster started by hand stays.
trap 'scripts/slurm-cluster.sh release || true; scripts/k8s-cluster.sh release || true' EXIT
# The Kubernetes cluster's binaries take about 25 minutes to build the first time: built
# here, before the tests, so no test waits on it past go test's timeout.
step "building the Kubernetes test cluster into .tools/k8s (scripts/k8s-cluster.sh build)"
scripts/k8s-cluster.sh build

step "gofmt -l (tracked Go files)"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [[ -n "$unformatted" ]]; then
  echo "test.sh: not gofmt-ed (run gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi

step "go vet ./..."
go vet ./...

# Many Ollama users run it on a Mac: planrun must build there (pure Go, no cgo: NVML is off).
step "go build for macOS (darwin/arm64, no cgo)"
GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build -o /dev/null ./cmd/planrun

# The agent image's build: no Kubernetes placement, no Kubernetes module (cmd/planrun's TestBuildWithoutKubernetes).
step "go build -tags nokube, and its vet"
CGO_ENABLED=0 go build -tags nokube -o /dev/null ./cmd/planrun
go vet -tags nokube ./placement/... ./apply/ ./plan/

# Ollama on an RTX card is often on Windows: the client must build there too.
step "go build for Windows (windows/amd64)"
GOOS=windows GOARCH=amd64 go build -o /dev/null ./cmd/planrun
# vet type-checks the test files too: a Windows contributor's `go test` compiles.
step "go vet for Windows (windows/amd64, tests included)"
GOOS=windows GOARCH=amd64 go vet ./...

step "go test -count=1 -timeout 45m ${*:+$* }./..."
go test -count=1 -timeout 45m "$@" ./...
step "all tests passed"

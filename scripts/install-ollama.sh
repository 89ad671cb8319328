#!/usr/bin/env bash
# Installs the pinned Ollama that planrun's integration tests and quickstart run against,
# built from the Go module proxy into the project-local .tools/bin (no prebuilt download).
# Idempotent: does nothing when the pinned version is already there.
set -euo pipefail

OLLAMA_VERSION="${OLLAMA_VERSION:-v0.6.5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.tools/bin"
stamp="$bin/.ollama-$OLLAMA_VERSION"

if [[ -x "$bin/ollama" && -f "$stamp" ]]; then
  exit 0
fi

# llama.cpp's server code, compiled by the ollama module's cgo, includes nlohmann/json.hpp.
if [[ ! -f /usr/include/nlohmann/json.hpp ]]; then
  echo "install-ollama: installing Debian's nlohmann-json3-dev (needed to build ollama's cgo code)" >&2
  if [[ $(id -u) -ne 0 ]]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nlohmann-json3-dev >/dev/null
fi

echo "install-ollama: building ollama $OLLAMA_VERSION from the Go module proxy into .tools/bin" >&2
echo "install-ollama: this compiles llama.cpp and takes several minutes on 2 cores (only the first time)" >&2
mkdir -p "$bin"
start=$(date +%s)
CGO_ENABLED=1 CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations" \
  GOBIN="$bin" go install "github.com/ollama/ollama@$OLLAMA_VERSION"
rm -f "$bin"/.ollama-*
touch "$stamp"
echo "install-ollama: done in $(( $(date +%s) - start ))s: $bin/ollama" >&2

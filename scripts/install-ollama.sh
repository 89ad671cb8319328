#!/usr/bin/env bash
# Installs the pinned Ollama that planrun's integration tests and quickstart run against,
# built from the Go module proxy into the project-local .tools/bin (no prebuilt download).
# Idempotent: does nothing when the pinned version, built by this recipe, is already there.
set -euo pipefail

OLLAMA_VERSION="${OLLAMA_VERSION:-v0.17.4}"
# malgo (Go bindings for miniaudio) carries miniaudio's single header; see below.
MALGO_VERSION=v0.11.24
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.tools/bin"
inc="$root/.tools/include"
# The stamp names the version and the build recipe ("ver": version stamped into the binary;
# "vendor": llama.cpp's vendored headers supplied from outside the module), so changing either
# rebuilds an existing install.
stamp="$bin/.ollama-$OLLAMA_VERSION-ver-vendor"

if [[ -x "$bin/ollama" && -f "$stamp" ]]; then
  echo "install-ollama: ollama $OLLAMA_VERSION already in .tools/bin" >&2
  exit 0
fi

# llama.cpp's code, compiled by the ollama module's cgo, includes headers from llama.cpp's
# vendor/ directory, which the Go module zip leaves out (Go drops every directory named vendor):
# nlohmann/json.hpp and stb/stb_image.h come from Debian, miniaudio/miniaudio.h (not packaged
# by Debian) from the malgo Go module, fetched through the Go module proxy like ollama itself.
missing=()
[[ -f /usr/include/nlohmann/json.hpp ]] || missing+=(nlohmann-json3-dev)
[[ -f /usr/include/stb/stb_image.h ]] || missing+=(libstb-dev)
if (( ${#missing[@]} )); then
  echo "install-ollama: installing Debian's ${missing[*]} (headers ollama's cgo code needs)" >&2
  if [[ $(id -u) -eq 0 ]]; then sudo=; elif command -v sudo >/dev/null; then sudo=sudo; else
    echo "install-ollama: not root and no sudo: install ${missing[*]} yourself" >&2
    exit 1
  fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [[ ! -f "$inc/miniaudio/miniaudio.h" ]]; then
  echo "install-ollama: fetching miniaudio.h from github.com/gen2brain/malgo@$MALGO_VERSION" >&2
  malgo=$(cd / && go mod download -json "github.com/gen2brain/malgo@$MALGO_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$inc/miniaudio"
  cp "$malgo/miniaudio.h" "$inc/miniaudio/miniaudio.h"
fi
for tool in gcc g++; do
  command -v "$tool" >/dev/null || { echo "install-ollama: $tool is needed to build ollama's cgo code" >&2; exit 1; }
done

echo "install-ollama: building ollama $OLLAMA_VERSION from the Go module proxy into .tools/bin" >&2
echo "install-ollama: this compiles llama.cpp and takes several minutes on 2 cores (only the first time)" >&2
mkdir -p "$bin"
start=$(date +%s)
# go install leaves the version at "0.0.0"; stamp the real one so /api/version (and every
# result row that records the server version) says which Ollama produced it.
# go's stderr goes through a filter in a plain pipe (fd 3 carries stdout past it); pipefail
# makes a failed build fail the script. (A process substitution's $! is unset once bash has
# reaped it, which under set -u killed the script after a successful build.)
{
  CGO_ENABLED=1 CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations" \
    CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -I$inc" \
    GOBIN="$bin" go install -ldflags "-X=github.com/ollama/ollama/version.Version=${OLLAMA_VERSION#v}" \
    "github.com/ollama/ollama@$OLLAMA_VERSION" 2>&1 1>&3 3>&- |
    { grep -v '^go: downloading ' || true; } >&2
} 3>&1
rm -f "$bin"/.ollama-*
touch "$stamp"
echo "install-ollama: done in $(( $(date +%s) - start ))s: $bin/ollama" >&2

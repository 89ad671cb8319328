#!/usr/bin/env bash
# Installs the pinned Ollama that planrun's integration tests and quickstart run against, built
# from the Go module proxy as Ollama's own Linux release is (the module's Dockerfile: its "cpu" and
# "build" stages), into the project-local .tools (no prebuilt download):
#   - .tools/lib/ollama: ggml's CPU backend in one library per x86 level (x64, sse42, sandybridge,
#     haswell, skylakex, icelake, alderlake), built with cmake from the module's CMakeLists.txt and
#     its "CPU" preset (GGML_CPU_ALL_VARIANTS). At run time ggml scores each against the CPU's
#     features and loads the best, so one install uses AVX2 or AVX-512 where the CPU has them and
#     still runs on a CPU without them;
#   - .tools/bin/ollama: the Go binary, built with cgo as the release's is (its own generic CPU
#     backend compiled in, which ranks below a loaded variant), and finding the variants in
#     ../lib/ollama beside it.
# Without the variants the binary has only that generic backend: no AVX at all, and 10-34x slower
# decoding on an AVX-512 CPU (issue 47).
# Idempotent: does nothing when the pinned version, built by this recipe, is already there.
set -euo pipefail

OLLAMA_VERSION="${OLLAMA_VERSION:-v0.17.4}"
# malgo (Go bindings for miniaudio) carries miniaudio's single header; see below.
MALGO_VERSION=v0.11.24
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.tools/bin"
lib="$root/.tools/lib/ollama"
# The stamp names the version and the build recipe ("ver": version stamped into the binary;
# "vendor": llama.cpp's vendored headers supplied from outside the module; "cpuvariants": the
# release's per-level CPU libraries in .tools/lib/ollama), so changing either rebuilds an
# existing install.
recipe=ver-vendor-cpuvariants
stamp="$bin/.ollama-$OLLAMA_VERSION-$recipe"
# The CPU libraries are built once per version and recipe into a cache outside the clone (as
# the Go build cache is): a fresh clone, CI's included, copies them instead of spending minutes
# on cmake again. The headers cgo needs live there too: their directory is in the compiler's
# flags, which key the Go build cache, so a clone at another path still finds llama.cpp's
# objects there. PLANRUN_CACHE moves it.
cache_root="${PLANRUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/planrun}"
cache="$cache_root/ollama-$OLLAMA_VERSION-cpu-variants"
inc="$cache_root/include"

if [[ -x "$bin/ollama" && -f "$stamp" && -f "$lib/libggml-base.so" ]]; then
  echo "install-ollama: ollama $OLLAMA_VERSION already in .tools/bin, its CPU libraries in .tools/lib/ollama" >&2
  exit 0
fi

# llama.cpp's code, compiled by the ollama module's cgo, includes headers from llama.cpp's
# vendor/ directory, which the Go module zip leaves out (Go drops every directory named vendor):
# nlohmann/json.hpp and stb/stb_image.h come from Debian, miniaudio/miniaudio.h (not packaged
# by Debian) from the malgo Go module, fetched through the Go module proxy like ollama itself.
# cmake builds the CPU libraries (ggml alone, which needs none of those headers).
"$root/scripts/install-system.sh" build ollama
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

start=$(date +%s)
if [[ ! -f "$cache/.built" ]]; then
  echo "install-ollama: building ollama $OLLAMA_VERSION's CPU libraries with cmake (its \"CPU\" preset) into ${cache/#$HOME/\~}" >&2
  echo "install-ollama: 7 levels of ggml's CPU backend: about 3.5 minutes on 2 cores, once per cache" >&2
  src=$(cd / && go mod download -json "github.com/ollama/ollama@$OLLAMA_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$cache"
  mkdir -p "$cache"
  # The module cache is read-only: the preset's build directory (the source's build/) is
  # replaced by one in the cache, and its install prefix (the source's dist/) too.
  if ! { cmake -S "$src" --preset CPU -B "$cache/build" -DCMAKE_INSTALL_PREFIX="$cache/dist" &&
    cmake --build "$cache/build" --parallel "$(nproc)" &&
    cmake --install "$cache/build" --component CPU --strip; } >"$cache/cmake.log" 2>&1; then
    echo "install-ollama: cmake failed; the last lines of $cache/cmake.log:" >&2
    tail -n 30 "$cache/cmake.log" >&2
    exit 1
  fi
  rm -rf "$cache/build"
  touch "$cache/.built"
  echo "install-ollama: CPU libraries built in $(( $(date +%s) - start ))s" >&2
fi
rm -rf "$lib.new"
mkdir -p "$(dirname "$lib")"
cp -a "$cache/dist/lib/ollama" "$lib.new"
rm -rf "$lib"
mv "$lib.new" "$lib"

echo "install-ollama: building ollama $OLLAMA_VERSION from the Go module proxy into .tools/bin" >&2
echo "install-ollama: cgo compiles llama.cpp: several minutes on 2 cores with a cold Go build cache" >&2
mkdir -p "$bin"
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
echo "install-ollama: done in $(( $(date +%s) - start ))s: $bin/ollama, its CPU libraries in $lib" >&2

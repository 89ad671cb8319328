#!/usr/bin/env bash
# build-planrun.sh OUT: build the planrun CLI to OUT, stamped with the checkout's commit.
# The one way the Makefile and the scripts build it: a binary built without the stamp
# reports another version, which history then shows as an environment change.
# Go's own VCS stamp is off under GOFLAGS=-buildvcs=false, hence the explicit one;
# go-nvml's cgo header warns about deprecated declarations on every cold build: quieted.
# Module downloads are done first, and their "go: downloading" lines shown only on failure.
set -euo pipefail
out="${1:?usage: build-planrun.sh OUT}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations"
scripts/go-mod-download.sh
go build -ldflags "-X github.com/planrun/planrun/internal/version.Commit=$(git rev-parse HEAD 2>/dev/null || true)" \
  -o "$out" ./cmd/planrun

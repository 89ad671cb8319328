#!/usr/bin/env bash
# go-mod-download.sh: fetch this module's dependencies quietly, before any go build or go run,
# so a cold module cache does not put a "go: downloading" line per module into a newcomer's log.
# Its output is shown only when the download fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! log=$(go mod download 2>&1); then
  printf '%s\n' "$log" >&2
  exit 1
fi

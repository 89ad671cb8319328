#!/usr/bin/env bash
# Installs the pinned LiteLLM proxy (the real gateway the taotoken integration tests and
# examples/gateway.hcl run through) into a virtualenv in the project-local .tools/litellm,
# from the Python package index, every package at the version scripts/requirements-gateway.txt pins.
# Idempotent: does nothing when that requirements file is already installed there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.tools/litellm"
reqs="$root/scripts/requirements-gateway.txt"
# The stamp names the requirements file's content, so changing a pin reinstalls.
sum=$(sha256sum "$reqs" | cut -c1-16)
stamp="$venv/.installed-$sum"

if [[ -x "$venv/bin/litellm" && -f "$stamp" ]]; then
  echo "install-litellm: litellm proxy (scripts/requirements-gateway.txt) already in .tools/litellm" >&2
  exit 0
fi

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "install-litellm: $python (3.9 or newer, with venv) is needed" >&2; exit 1; }
"$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' || {
  echo "install-litellm: $python is older than 3.9 or lacks the venv module (Debian: apt-get install python3-venv)" >&2
  exit 1
}

echo "install-litellm: installing $(grep '^litellm==' "$reqs") with its proxy extras into .tools/litellm" >&2
echo "install-litellm: about 120 packages, all wheels: a minute or two and about 750 MiB (only the first time)" >&2
start=$(date +%s)
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$reqs"
touch "$stamp"
echo "install-litellm: done in $(( $(date +%s) - start ))s: $venv/bin/litellm" >&2

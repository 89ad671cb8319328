#!/usr/bin/env bash
# Prepares the GPU check (issue 6) for the device machine: everything it needs goes into
# .gpucarry/ (git-ignored), which the device tool carries. Then, in one device call:
#
#   run(carry: [".gpucarry"], timeout_s: 420, command: "bash .gpucarry/check.sh")
#
# check.sh starts ../shared/gpu/openai_gpu_server.py (a random-weight Llama on the GPU),
# runs planrun apply with NVML sampling on and off, samples nvidia-smi every 100 ms
# beside it, and leaves the results in $OUT (apply logs, CSVs, smi.csv, and energy.txt: each
# row's energy per token from NVML's energy counter beside nvidia-smi's power draw).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
server="${GPU_SERVER:-$root/../shared/gpu/openai_gpu_server.py}"
[[ -f "$server" ]] || { echo "prepare: no GPU server at $server (set GPU_SERVER)" >&2; exit 1; }
mkdir -p .gpucarry
cp "$server" .gpucarry/openai_gpu_server.py
cp scripts/gpu-check/check.sh scripts/gpu-check/gpu.hcl .gpucarry/
CGO_ENABLED=1 CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations" go build -o .gpucarry/planrun ./cmd/planrun
echo "prepare: .gpucarry ready ($(du -sh .gpucarry | cut -f1)); run: bash .gpucarry/check.sh on the device" >&2

#!/usr/bin/env bash
# Runs on the device machine (see prepare.sh). Keep it short: the device time is scarce.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/gpu-check-out}"
mkdir -p "$out"
PYTHONUNBUFFERED=1 python3 .gpucarry/openai_gpu_server.py --port 8000 --layers 4 > "$out/server.log" 2>&1 &
server=$!
for _ in $(seq 120); do curl -sf http://127.0.0.1:8000/health >/dev/null && break; sleep 1; done
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > "$out/smi-idle.csv"
# nvidia-smi's own view, every 100 ms, beside planrun's NVML sampler.
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu,power.draw --format=csv -lms 100 > "$out/smi.csv" &
smi=$!
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > "$out/smi-apps.csv"
./.gpucarry/planrun apply -results "$out/on" .gpucarry/gpu.hcl > "$out/apply-on.log" 2>&1
./.gpucarry/planrun apply -gpu=false -results "$out/off" .gpucarry/gpu.hcl > "$out/apply-off.log" 2>&1
kill "$smi" "$server" 2>/dev/null
wait 2>/dev/null
# Flatten what the device tool brings back (at most 8 files, 2 folders deep).
cp "$out"/on/*/results.csv "$out/results-on.csv" 2>/dev/null
cp "$out"/off/*/results.csv "$out/results-off.csv" 2>/dev/null
cp "$out"/on/*/report.md "$out/report-on.md" 2>/dev/null
rm -rf "$out/on" "$out/off"
tail -n 15 "$out/apply-on.log" "$out/apply-off.log"

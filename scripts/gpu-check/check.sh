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
# Energy per token (issue 51): planrun's rows beside nvidia-smi's mean power.draw over the run.
python3 - "$out" > "$out/energy.txt" 2>&1 <<'PY'
import csv, sys
out = sys.argv[1]
try:
    rows = list(csv.DictReader(open(out + "/results-on.csv")))
except OSError as e:
    sys.exit(f"no results-on.csv: {e}")
for r in rows:
    print(r["concurrency"], "energy_source=" + r.get("energy_source", "(no column)"),
          "J/token=" + r.get("energy_per_token_j", ""), "tok/J=" + r.get("tokens_per_joule", ""),
          "W=" + r.get("power_mean_w", ""), "gpu_energy_j=" + r.get("gpu_energy_j", ""))
watts = []
for line in open(out + "/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        watts.append(float(f[-1].split()[0]))
    except (ValueError, IndexError):
        pass
if watts:
    print(f"nvidia-smi power.draw over the whole check: mean {sum(watts)/len(watts):.1f} W, max {max(watts):.1f} W, {len(watts)} samples")
PY
tail -n 15 "$out/apply-on.log" "$out/apply-off.log" "$out/energy.txt"

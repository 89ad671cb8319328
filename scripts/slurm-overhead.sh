#!/bin/bash
# What a Slurm placement adds around a cell: the mock server cell of examples/slurm.hcl
# (TTFT 50 ms, TPOT 5 ms) run N times through Slurm and N times on this machine, with
#   start to first request: apply's start (Slurm: the job's submission) to the first request
#   last request to merged row: the last request's end to the row in the run's results.csv
# and the cell's TTFT / TPOT p50 each time. Needs the test cluster (scripts/slurm-cluster.sh
# start) and a planrun binary: scripts/slurm-overhead.sh ./planrun [N]
set -euo pipefail
bin=$(realpath "$1"); n=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's#"../results/slurm/#"results/#' "$(dirname "$0")/../examples/slurm.hcl" > "$work/slurm.hcl"
# The same plan with the cell placed on this machine: hardware "small" without its slurm block.
python3 - "$work/slurm.hcl" "$work/local.hcl" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r'(hardware "small" \{.*?)\n  slurm \{.*?\n  \}', r'\1', s, count=1, flags=re.S)
open(sys.argv[2], "w").write(s)
PY
for place in slurm local; do
  for i in $(seq "$n"); do
    (cd "$work" && "$bin" apply -quiet -gpu=false -only 'mock/*' -var planrun="$bin" -var tools="$work" "$place.hcl" >/dev/null)
    run=$(ls -1td "$work"/results/*/ | head -n 1) # the newest run directory
    python3 - "$place" "$run" <<'PY'
import csv, datetime, glob, json, os, sys
place, run = sys.argv[1], sys.argv[2]
def t(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")[:26] + "+00:00").timestamp()
start = t(json.load(open(run + "/manifest.json"))["started"])
if place == "slurm":
    start = os.stat(glob.glob(run + "/slurm/*/job.sh")[0]).st_mtime  # written just before sbatch
first, last = 1e18, 0
for line in open(run + "/requests.jsonl"):
    r = json.loads(line); s = t(r["start"]); first = min(first, s); last = max(last, s + r["end_ns"] / 1e9)
merged = os.stat(run + "/results.csv").st_mtime
rows = list(csv.DictReader(open(run + "/results.csv")))
figs = " ".join("c=%s ttft_p50=%.1fms tpot_p50=%.2fms" % (r["concurrency"], float(r["ttft_p50_s"]) * 1e3, float(r["tpot_p50_ms"])) for r in rows)
print("%-5s start→first request %6.2fs  last request→merged row %5.2fs  %s" % (place, first - start, merged - last, figs))
PY
  done
done

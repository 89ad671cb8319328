#!/usr/bin/env bash
# ollama-decode-rate.sh: the pinned Ollama's own decode time per token (eval_duration /
# eval_count of /api/generate) for each of the quickstart's variants, on one core, with
# the CPU libraries the install brought (.tools/lib/ollama) and without them (the cgo
# build's generic CPU backend alone: a copy of the binary with no lib/ollama beside it; the
# server sets its runners' OLLAMA_LIBRARY_PATH itself). Issue 47's check: a build without
# the CPU's vector extensions decodes 10-34x slower.
#   scripts/ollama-decode-rate.sh [CORE [REQUESTS [TOKENS]]]   (defaults: 1 5 64)
# Needs `make quickstart` once (the pinned Ollama and the variants in .tools/quickstart-25m).
# Prints one line per build and variant: the median over REQUESTS requests, and the load
# average when it ended. OLLAMA_DECODE_LOGS=DIR keeps each server's log there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
core="${1:-1}" requests="${2:-5}" tokens="${3:-64}"
ollama="$root/.tools/bin/ollama" dir="$root/.tools/quickstart-25m"
[[ -x "$ollama" && -d "$dir/models" ]] || { echo "ollama-decode-rate: run make quickstart first" >&2; exit 1; }
work=$(mktemp -d)
pid=
stop() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=; }
trap 'stop; rm -rf "$work"' EXIT
mkdir -p "$work/generic/bin"
cp "$ollama" "$work/generic/bin/ollama"

for build in release-cpu-libraries generic-cgo-only; do
  port=$("$root/scripts/free-port.sh" 11700)
  exe="$ollama"
  [[ $build == generic-cgo-only ]] && exe="$work/generic/bin/ollama"
  OLLAMA_HOST="127.0.0.1:$port" OLLAMA_MODELS="$dir/models" HOME="$dir/home" OLLAMA_MAX_LOADED_MODELS=1 \
    taskset -c "$core" "$exe" serve >"$work/$build.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do curl -fs "http://127.0.0.1:$port/api/version" >/dev/null && break; sleep 0.2; done
  for model in tiny-f16 tiny-q8_0 tiny-q4_K_M; do
    ms=()
    for i in $(seq 0 "$requests"); do # request 0 loads the model and is not counted
      out=$(curl -fs "http://127.0.0.1:$port/api/generate" -d "{\"model\":\"$model\",\"prompt\":\"hello world, the model\",\"stream\":false,
        \"options\":{\"num_predict\":$tokens,\"num_thread\":1,\"seed\":$i,\"temperature\":0}}")
      (( i == 0 )) && continue
      ms+=("$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["eval_duration"]/1e6/d["eval_count"])' <<<"$out")")
    done
    median=$(printf '%s\n' "${ms[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
    system=$(grep -o 'msg=system.*' "$work/$build.log" | tail -n 1)
    printf '%-22s %-12s %8.2f ms/token (median of %d, %d tokens, core %s)  load %s  %s\n' \
      "$build" "$model" "$median" "$requests" "$tokens" "$core" "$(cut -d' ' -f1-3 /proc/loadavg)" "$system"
  done
  stop
  if [[ -n "${OLLAMA_DECODE_LOGS:-}" ]]; then mkdir -p "$OLLAMA_DECODE_LOGS" && cp "$work/$build.log" "$OLLAMA_DECODE_LOGS/"; fi
done

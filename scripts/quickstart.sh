#!/usr/bin/env bash
# The quickstart: planrun measuring a real server it starts and stops itself.
#   1. builds the pinned Ollama into .tools/bin (first time only: several minutes),
#   2. writes the 25M-parameter random-weight model into .tools/quickstart-25m,
#   3. builds planrun and runs examples/quickstart.hcl on a free loopback port,
#   4. prints the Markdown table, and fails if any Ollama process is left behind.
# Results go under results/quickstart/ (a run directory per run, and a CSV ledger).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
say() { echo "quickstart: $*" >&2; }
# go-nvml's cgo header warns about deprecated declarations on every cold build: quiet
# them, as scripts/test.sh does.
export CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations"
started=$(date +%s)

say "step 1/4: the pinned Ollama (built from the Go module proxy into .tools/bin on first use)"
# go install is silent for minutes while it compiles llama.cpp: say it is still working.
scripts/install-ollama.sh &
build=$!
trap 'kill "$build" 2>/dev/null || true' EXIT
while kill -0 "$build" 2>/dev/null; do
  for _ in $(seq 30); do kill -0 "$build" 2>/dev/null && sleep 1; done
  if kill -0 "$build" 2>/dev/null; then say "still building Ollama ($(( $(date +%s) - started ))s so far; go compiles llama.cpp with cgo)"; fi
done
wait "$build"
trap - EXIT

dir="$root/.tools/quickstart-25m" # the 25M-parameter model (tinymodel -large)
say "step 2/4: writing the tiny model into ${dir#"$root"/}"
mkdir -p "$dir"
scripts/go-mod-download.sh # no "go: downloading" lines from go run on a cold cache
go run ./tools/tinymodel -large -o "$dir" >/dev/null

say "step 3/4: building planrun"
scripts/build-planrun.sh "$root/.tools/bin/planrun"

# The plan's port when it is free (the same on every run, so runs compare), else the next.
port=$(scripts/free-port.sh 11500)
say "step 4/4: planrun apply examples/quickstart.hcl (Ollama on 127.0.0.1:$port)"
status=0
"$root/.tools/bin/planrun" apply -results "$root/results/quickstart" examples/quickstart.hcl \
  -var "port=$port" -var "ollama=$root/.tools/bin/ollama" -var "dir=$dir" || status=$?

# planrun stops the server it started, on success, failure and Ctrl-C alike; check.
# Ours run in $dir (the server block's dir), which tells them from the test suite's.
left=
for pid in $(pgrep -f "$root/.tools/bin/ollama" || true); do
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null || echo "$dir")
  if [[ "$cwd" == "$dir"* ]]; then left+="$(ps -o pid=,args= -p "$pid" 2>/dev/null)"$'\n'; fi
done
if [[ -n "$left" ]]; then
  say "FAIL: Ollama processes left running after planrun exited:"
  printf '%s' "$left" >&2
  exit 1
fi

report=$(ls -1td "$root"/results/quickstart/*/report.md 2>/dev/null | head -n 1) # the newest, however it is named
if [[ -n "$report" ]]; then
  echo
  cat "$report"
  echo
  say "report: ${report#"$root"/}"
fi
say "done in $(( $(date +%s) - started ))s (planrun exit $status); no Ollama process left"
cat >&2 <<EOF

The planrun binary is $root/.tools/bin/planrun (export PATH="$root/.tools/bin:\$PATH" to run it as planrun).
To point your own plan at the pinned Ollama and the tiny model it just built, start Ollama and create the model:
  export OLLAMA_HOST=127.0.0.1:11434 OLLAMA_MODELS=$dir/models
  HOME=$dir $root/.tools/bin/ollama serve &
  sleep 2 && (cd $dir && $root/.tools/bin/ollama create tiny-q4_K_M --quantize q4_K_M -f Modelfile)
then in your plan: backend "ollama" "local" { url = "http://127.0.0.1:11434" } with model_id = "tiny-q4_K_M"
(or copy examples/quickstart.hcl, whose server block starts and stops Ollama itself).
EOF
exit "$status"

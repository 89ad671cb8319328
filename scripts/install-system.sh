#!/usr/bin/env bash
# The one list of Debian packages that planrun's builds, quickstart and tests need, and the one
# place that installs them: scripts/test.sh, .ci/run, the engine installers and the test
# clusters' scripts all call it, so a fresh machine gets what the tests look for.
#
#   scripts/install-system.sh [GROUP...]     install what the groups need and this machine lacks
#   scripts/install-system.sh -n [GROUP...]  install nothing: list what is missing, one package a
#                                            line with what needs it, then the command; exit 1 if
#                                            anything is missing
#
# GROUP is one of the names below (build, ollama, python, vllm, slurm, k8s, ssh, chromium);
# none means all. As root it runs apt-get; not root, it runs apt-get through sudo when sudo is
# installed (sudo may ask for a password), else prints the one apt-get command to run as root
# and exits 1.
#
# Every check is what the code that needs the tool looks for (a command on PATH, or the file a
# test or script opens), so "nothing missing" here means nothing a test would miss.
# INSTALL_SYSTEM_ROOT (empty on a real machine) prefixes the file checks: its own test points it
# at a fake root, with PATH at fake commands.
set -euo pipefail

say() { echo "install-system: $*" >&2; }

# group|check|package|what needs it. A check is cmd:NAME (on PATH), file:PATH (exists), or
# venv:NAME (NAME on PATH can make a virtualenv with pip).
list='
build|cmd:gcc|gcc|cgo (NVML), Ollama'"'"'s llama.cpp
build|cmd:g++|g++|Ollama'"'"'s llama.cpp
build|cmd:git|git|scripts/build-planrun.sh stamps the commit; the gofmt step lists tracked files
build|file:/etc/ssl/certs/ca-certificates.crt|ca-certificates|the Go module proxy, PyPI
ollama|file:/usr/include/nlohmann/json.hpp|nlohmann-json3-dev|Ollama'"'"'s llama.cpp (scripts/install-ollama.sh)
ollama|file:/usr/include/stb/stb_image.h|libstb-dev|Ollama'"'"'s llama.cpp (scripts/install-ollama.sh)
ollama|cmd:cmake|cmake|Ollama'"'"'s per-ISA CPU libraries, as its releases build them (scripts/install-ollama.sh)
python|cmd:python3|python3|the vLLM and LiteLLM virtualenvs (scripts/install-vllm.sh, install-litellm.sh)
python|venv:python3|python3-venv|the vLLM and LiteLLM virtualenvs (scripts/install-vllm.sh, install-litellm.sh)
vllm|file:/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4|libtcmalloc-minimal4|vLLM on a CPU preloads tcmalloc (scripts/install-vllm.sh)
slurm|file:/usr/sbin/slurmctld|slurmctld|the Slurm test cluster (internal/testkit/slurmtest, scripts/slurm-cluster.sh)
slurm|file:/usr/sbin/slurmd|slurmd|the Slurm test cluster (internal/testkit/slurmtest, scripts/slurm-cluster.sh)
slurm|cmd:sbatch|slurm-client|the Slurm test cluster (internal/testkit/slurmtest, scripts/slurm-cluster.sh)
slurm|file:/usr/sbin/munged|munge|the Slurm test cluster (internal/testkit/slurmtest, scripts/slurm-cluster.sh)
k8s|cmd:containerd|containerd|the Kubernetes test cluster (internal/testkit/k8stest, scripts/k8s-cluster.sh)
k8s|cmd:ctr|containerd|the Kubernetes test cluster (internal/testkit/k8stest, scripts/k8s-cluster.sh)
k8s|cmd:runc|runc|the Kubernetes test cluster (internal/testkit/k8stest, scripts/k8s-cluster.sh)
k8s|file:/usr/lib/cni/loopback|containernetworking-plugins|the Kubernetes test cluster (internal/testkit/k8stest, scripts/k8s-cluster.sh)
k8s|cmd:ip|iproute2|the Kubernetes test cluster'"'"'s network namespace (scripts/k8s-cluster.sh)
k8s|cmd:openssl|openssl|the Kubernetes test cluster'"'"'s certificates (scripts/k8s-cluster.sh)
k8s|cmd:curl|curl|the Kubernetes test cluster'"'"'s readiness checks (scripts/k8s-cluster.sh)
ssh|file:/usr/sbin/sshd|openssh-server|load agents over SSH (internal/testkit/sshtest)
ssh|cmd:ssh|openssh-client|load agents over SSH (internal/testkit/sshtest)
ssh|cmd:ssh-keygen|openssh-client|load agents over SSH (internal/testkit/sshtest)
chromium|cmd:chromium|chromium|report.html rendered in a browser (internal/testkit/browsertest)
'
# Only bash's builtins before apt-get: the test runs this with PATH at its fake commands.
groups=" "
while IFS='|' read -r group _; do
  [[ -z $group || $groups == *" $group "* ]] || groups+="$group "
done <<<"$list"

dry=0
if [[ ${1:-} == -n ]]; then
  dry=1
  shift
fi
want=("$@")
for g in "${want[@]}"; do
  [[ $groups == *" $g "* ]] || { say "no group \"$g\" (the groups:${groups% })"; exit 2; }
done

present() {
  local kind=${1%%:*} what=${1#*:}
  case $kind in
  cmd) command -v "$what" >/dev/null ;;
  file) [[ -e "${INSTALL_SYSTEM_ROOT:-}$what" ]] ;;
  # Debian's python3 has the venv module without ensurepip until python3-venv is installed.
  venv) command -v "$what" >/dev/null && "$what" -c 'import venv, ensurepip' 2>/dev/null ;;
  esac
}

missing=() # packages, each once, in the list's order
lines=()   # "package  (what needs it)" for -n
while IFS='|' read -r group check pkg why; do
  [[ -n $group ]] || continue
  if ((${#want[@]})) && [[ " ${want[*]} " != *" $group "* ]]; then continue; fi
  present "$check" && continue
  [[ " ${missing[*]:-} " == *" $pkg "* ]] && continue
  missing+=("$pkg")
  lines+=("$pkg  (${check#*:} missing: $why)")
done <<<"$list"

command=(apt-get install -y -qq --no-install-recommends "${missing[@]}")
if ((dry)); then
  if ((${#missing[@]} == 0)); then
    say "nothing missing (${want[*]:-all groups})"
    exit 0
  fi
  printf '%s\n' "${lines[@]}"
  echo "apt-get update && ${command[*]}"
  exit 1
fi
((${#missing[@]})) || exit 0

if [[ $(id -u) -eq 0 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  as=()
elif command -v sudo >/dev/null; then
  say "not root: installing through sudo"
  as=(sudo DEBIAN_FRONTEND=noninteractive) # sudo drops the environment but takes VAR=value
else
  say "not root and no sudo: as root, run"
  echo "apt-get update && ${command[*]}"
  exit 1
fi
say "installing Debian packages: ${missing[*]}"
"${as[@]}" apt-get update -qq >/dev/null
"${as[@]}" "${command[@]}" >/dev/null

#!/usr/bin/env bash
# Mutation testing of the measuring path (issue 24): gremlins v0.6.0 changes one operator
# at a time and reruns the package's tests. Prints, per package, killed / lived / not
# covered / timed out / efficacy / mutator coverage; writes the surviving (LIVED) mutants to
# .tools/mutation/survivors.txt; fails when a survivor is not listed in
# scripts/mutation-equivalent.txt (a line per known-equivalent mutant, with its reason).
#
#   scripts/mutation.sh                          # every package of the measuring path
#   scripts/mutation.sh ./stats ./load/executor       # some of them
#   GREMLINS_FLAGS="-E 'session|replay'" scripts/mutation.sh ./executor   # extra gremlins flags
#
# Not part of scripts/test.sh: it reruns each package's tests once per mutant (minutes to
# an hour). It runs one package at a time, one worker, at nice 15, since the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

GREMLINS_VERSION=v0.6.0
# `go install` builds report their version as "dev": the pinned version is in the file name.
bin=$root/.tools/bin/gremlins-$GREMLINS_VERSION
if [[ ! -x $bin ]]; then
  echo "mutation.sh: installing gremlins $GREMLINS_VERSION into .tools/bin" >&2
  tmp=$(mktemp -d)
  GOBIN=$tmp go install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
  mkdir -p "$root/.tools/bin"
  mv "$tmp/gremlins" "$bin"
  rmdir "$tmp"
fi

export CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations"
unset OLLAMA_HOST
# gremlins runs the tests in a copy of the module, where .tools/bin is not: the real-server
# tests find the same pinned binary through PLANRUN_OLLAMA.
if [[ -z ${PLANRUN_OLLAMA:-} ]]; then
  PLANRUN_OLLAMA=$(readlink -f "$root/.tools/bin/ollama" 2>/dev/null || true)
  [[ -x $PLANRUN_OLLAMA ]] || scripts/install-ollama.sh
  export PLANRUN_OLLAMA=${PLANRUN_OLLAMA:-$(readlink -f "$root/.tools/bin/ollama")}
fi
# Likewise vLLM for the openai adapter's real-server tests: without it they fail in the
# copy, the unmutated run with them, and gremlins measures nothing.
if [[ -z ${PLANRUN_VLLM:-} && -e $root/.tools/bin/vllm-serve ]]; then
  export PLANRUN_VLLM=$(readlink -f "$root/.tools/bin/vllm-serve")
fi

pkgs=("$@")
if ((${#pkgs[@]} == 0)); then
  pkgs=(./internal/jsonscan ./internal/rxstamp ./stats ./load/executor ./backends ./backends/openai
    ./backends/ollama ./backends/taotoken ./ledger ./ledger/runreport)
fi

out=$root/.tools/mutation
mkdir -p "$out"
survivors=$out/survivors.txt
: >"$survivors"
known=$root/scripts/mutation-equivalent.txt

printf '| package | killed | lived | not covered | timed out | efficacy | mutator coverage |\n'
printf '|---|---|---|---|---|---|---|\n'
for pkg in "${pkgs[@]}"; do
  name=${pkg#./}
  log=$out/${name//\//_}.log
  # A mutant's tests get 10x the package's normal test time before they count as timed out.
  # shellcheck disable=SC2086 # GREMLINS_FLAGS is split into flags on purpose
  eval "extra=(${GREMLINS_FLAGS:-})"
  # gremlins mutates and covers a whole tree (./backends/...), but a mutant is judged by
  # its own package's tests only. A package with packages under it (./backends, whose
  # adapters have their own rows) is measured alone: its own files (-E /, paths are
  # relative to it), and only its own tests in the coverage run, not the adapters'
  # real-server tests, which take minutes and judge none of its mutants.
  goflags=${GOFLAGS:-}
  if go list "$pkg/..." | grep -qvx "$(go list "$pkg")"; then
    own=$(go test -list '.*' "$pkg" | grep -E '^(Test|Fuzz|Example)' | paste -sd'|')
    extra+=(-E /)
    goflags="$goflags -run=^($own)\$"
  fi
  # No --test-cpu: gremlins v0.6.0 passes it as the one argument "-cpu 1", which go test
  # rejects, so every mutant's test run failed and counted as killed (a weakened test
  # still showed 100% efficacy). One worker at nice 15 keeps the run gentle instead.
  GOFLAGS=$goflags nice -n 15 "$bin" unleash --workers 1 --timeout-coefficient 10 "${extra[@]}" \
    -o "$out/${name//\//_}.json" "$pkg" >"$log" 2>&1 || {
    echo "mutation.sh: gremlins failed on $pkg (log: $log)" >&2
    tail -5 "$log" >&2
    exit 1
  }
  # gremlins' own summary lines: "Killed: K, Lived: L, Not covered: N", "Timed out: T, ...".
  k=$(sed -n 's/^Killed: \([0-9]*\), Lived: \([0-9]*\), Not covered: \([0-9]*\).*/\1 \2 \3/p' "$log")
  t=$(sed -n 's/^Timed out: \([0-9]*\),.*/\1/p' "$log")
  eff=$(sed -n 's/^Test efficacy: //p' "$log")
  cov=$(sed -n 's/^Mutator coverage: //p' "$log")
  read -r killed lived notcov <<<"$k"
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$killed" "$lived" "$notcov" "${t:-0}" "$eff" "$cov"
  # " LIVED CONDITIONALS_BOUNDARY at scan.go:60:12" -> "internal/jsonscan scan.go:60:12 CONDITIONALS_BOUNDARY"
  sed -n "s|^ *LIVED \([A-Z_]*\) at \(.*\)$|$name \2 \1|p" "$log" >>"$survivors"
done

echo
echo "survivors: $survivors ($(wc -l <"$survivors") mutants)"
# A known line is "<package> <file>:<line>:<col> <MUTATOR> # reason".
new=$(grep -v -x -F -f <(sed 's/ *#.*//' "$known" | grep -v '^$') "$survivors" || true)
if [[ -n $new ]]; then
  echo "mutation.sh: survivors not listed in scripts/mutation-equivalent.txt (kill them with a test, or list them with a reason):" >&2
  echo "$new" >&2
  exit 1
fi
echo "mutation.sh: every survivor is listed as equivalent"

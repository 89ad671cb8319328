#!/usr/bin/env bash
# free-port.sh PORT [EXCEPT...]: print PORT if nobody answers on 127.0.0.1:PORT, else the
# next free port above it, skipping the EXCEPT ports (ones already picked). The same port
# on every run unless it is taken: a port picked at random changed the plan's variables,
# its hash and its backend URLs on every run, so history saw each run as an environment
# change. bash's /dev/tcp: no extra tool.
set -euo pipefail
p="${1:?usage: free-port.sh PORT [EXCEPT...]}"
shift
for _ in $(seq 200); do
  if [[ " $* " != *" $p "* ]] && ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "$p"
    exit 0
  fi
  p=$((p + 1))
done
echo "free-port.sh: no free loopback port from $1 to $p" >&2
exit 1

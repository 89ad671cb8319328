#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for planrun's Slurm placement tests and for
# trying examples/slurm.hcl: munged, slurmctld and slurmd from Debian's packages, run as root,
# with configuration, state and logs in one directory. The node has two partitions, "small" and
# "large", standing for two kinds of GPU card (this machine has none: they only place jobs).
#
#   scripts/slurm-cluster.sh start     install the packages if missing, start the daemons, wait
#                                      until the node is idle (nothing to do when it is up already)
#   scripts/slurm-cluster.sh status    sinfo, or why the cluster is not up
#   scripts/slurm-cluster.sh stop      cancel every job, stop the daemons (munged last), leave no
#                                      daemon behind
#   scripts/slurm-cluster.sh env       print the export line the Slurm commands need
#   scripts/slurm-cluster.sh release   stop the cluster if the tests started it and no test
#                                      process still uses it (scripts/test.sh and the Slurm
#                                      tests' TestMain run it when they end)
#
# Test processes (internal/testkit/slurmtest) hold a shared lock on $dir/tests.lock while they use the
# cluster, and mark a cluster they started with $dir/started-by-tests; release stops it under an
# exclusive lock, so a test process starting meanwhile waits and starts it again. A cluster started
# by hand has no mark and is left running. Test processes of several packages run at once (go test
# runs packages in parallel), so start and stop take $dir/start.lock exclusively: one start runs at a
# time, and a second finds the cluster up and leaves it alone (two starts at once rewrote the
# configuration and its link under a running sbatch, which then found no configuration).
#
# The configuration goes to $PLANRUN_SLURM_DIR (default /tmp/planrun-slurm)/slurm.conf, and
# /etc/slurm/slurm.conf points at it (a symlink, made only where no other slurm.conf is there and
# removed by stop), so sbatch, squeue and planrun find the cluster without SLURM_CONF.
set -euo pipefail

dir="${PLANRUN_SLURM_DIR:-/tmp/planrun-slurm}"
scripts="$(cd "$(dirname "$0")" && pwd)"
conf="$dir/slurm.conf"
etc_conf=/etc/slurm/slurm.conf
node="$(hostname -s)"
lease="$dir/tests.lock"
marker="$dir/started-by-tests"
startlock="$dir/start.lock"
say() { echo "slurm-cluster: $*" >&2; }

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    say "must run as root (the daemons run as root here, munged as user munge)"
    exit 1
  fi
}

# Slurm and munge, from the one list of Debian packages (scripts/install-system.sh).
install_packages() { "$scripts/install-system.sh" slurm; }

start_munge() {
  if [[ -f /run/munge/munged.pid ]] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
    return 0
  fi
  if [[ ! -s /etc/munge/munge.key ]]; then
    mkdir -p /etc/munge
    head -c 1024 /dev/urandom >/etc/munge/munge.key
  fi
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 700 /etc/munge
  chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  chmod 755 /run/munge
  # 8>&-: a daemon must not inherit the start lock (munged keeps its descriptors open).
  runuser -u munge -- /usr/sbin/munged 8>&-
}

write_conf() {
  local cpus mem
  cpus=$(nproc)
  # Leave the kernel some memory: RealMemory above what slurmd sees drains the node.
  mem=$(($(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) * 8 / 10))
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  # Written aside and renamed, so a reader never sees a half-written file.
  cat >"$conf.new" <<EOF
# Written by planrun's scripts/slurm-cluster.sh: a single-node test cluster.
ClusterName=planrun
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
# sstat reads a running job's memory (MaxRSS of its batch step) from this plugin, which
# reads the job's processes in /proc every second (planrun's Slurm rows carry it).
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
# sacct reads finished jobs from the controller's text log.
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
KillWait=5
MinJobAge=300
SchedulerParameters=defer_batch
NodeName=$node CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=small Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=large Nodes=$node MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  mv -f "$conf.new" "$conf"
  if [[ -L $etc_conf || ! -e $etc_conf ]]; then
    mkdir -p /etc/slurm
    # A new link renamed over the old one: never a moment without it.
    ln -sfn "$conf" "$etc_conf.new.$$"
    mv -Tf "$etc_conf.new.$$" "$etc_conf"
  elif ! grep -q "scripts/slurm-cluster.sh" "$etc_conf"; then
    say "$etc_conf exists and is not ours: left alone; export SLURM_CONF=$conf to use this cluster"
  fi
}

running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# lock_start holds $startlock exclusively until this script exits.
lock_start() {
  mkdir -p "$dir"
  exec 8>>"$startlock"
  flock -x 8
}

# up: both daemons run, sbatch finds this configuration, and the node takes jobs.
up() {
  running "$dir/slurmctld.pid" && running "$dir/slurmd.pid" || return 1
  [[ -f $conf ]] || return 1
  # sbatch finds it through the link (or a slurm.conf not ours, which start leaves alone).
  [[ $etc_conf -ef $conf ]] || [[ -e $etc_conf && ! -L $etc_conf ]] || return 1
  SLURM_CONF="$conf" sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'
}

# start [--tests]: --tests marks a cluster this call started as the tests' (release stops it).
start() {
  need_root
  lock_start
  if up; then
    say "already up: node $node (config $conf)"
    return 0
  fi
  install_packages
  start_munge
  write_conf
  export SLURM_CONF="$conf"
  running "$dir/slurmctld.pid" || /usr/sbin/slurmctld -f "$conf" 8>&-
  running "$dir/slurmd.pid" || /usr/sbin/slurmd -f "$conf" 8>&-
  for _ in $(seq 1 60); do
    if sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      say "up: node $node, partitions small and large (config $conf)"
      if [[ ${1:-} == --tests ]]; then : >"$marker"; fi
      sinfo
      return 0
    fi
    scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1 || true
    sleep 1
  done
  say "the node did not become idle in 60 s; logs in $dir/log"
  sinfo -N -l >&2 || true
  tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
  exit 1
}

stop_pid() {
  local pidfile=$1 name=$2
  running "$pidfile" || return 0
  local pid
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  say "$name did not stop on SIGTERM; killing it"
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  need_root
  lock_start
  export SLURM_CONF="$conf"
  if running "$dir/slurmctld.pid"; then
    scancel --full --quiet --user=root 2>/dev/null || true
  fi
  stop_pid "$dir/slurmd.pid" slurmd
  stop_pid "$dir/slurmctld.pid" slurmctld
  # slurmstepd of a job cut off by the stop would outlive slurmd.
  pkill -x slurmstepd 2>/dev/null || true
  stop_pid /run/munge/munged.pid munged
  if [[ -L $etc_conf && $(readlink "$etc_conf") == "$conf" ]]; then
    rm -f "$etc_conf"
  fi
  rm -f "$marker"
  say "stopped"
}

release() {
  if [[ ! -f $marker ]]; then
    if running "$dir/slurmctld.pid"; then
      say "running, but not started by the tests: left running (scripts/slurm-cluster.sh stop ends it)"
    fi
    return 0
  fi
  need_root
  mkdir -p "$dir"
  exec 9>>"$lease"
  if ! flock -n -x 9; then
    say "still in use by another test process: the last one to end stops it"
    return 0
  fi
  say "stopping the cluster the tests started"
  stop
}

status() {
  export SLURM_CONF="$conf"
  if ! running "$dir/slurmctld.pid"; then
    say "not running (no slurmctld; start it with scripts/slurm-cluster.sh start)"
    exit 1
  fi
  sinfo
}

case "${1:-}" in
start) start "${2:-}" ;;
stop) stop ;;
status) status ;;
env) echo "export SLURM_CONF=$conf" ;;
release) release ;;
*)
  echo "usage: scripts/slurm-cluster.sh start|stop|status|env|release" >&2
  exit 2
  ;;
esac

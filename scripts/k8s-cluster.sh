#!/usr/bin/env bash
# A single-node Kubernetes cluster on this machine, for planrun's Kubernetes placement tests
# and for trying examples/kubernetes.hcl: real etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kubelet, CoreDNS as the cluster DNS, with Debian's containerd, runc and
# CNI plugins, run as root.
#
#   scripts/k8s-cluster.sh build     build the binaries into .tools/k8s/bin (only the first time:
#                                    about 25 minutes on 2 cores, CoreDNS some 2 more; `start`
#                                    builds when needed)
#   scripts/k8s-cluster.sh start     build if needed, install the packages if missing, start the
#                                    daemons, wait until the node is Ready (seconds when built),
#                                    and import the agent image built from this checkout (also
#                                    when the cluster was up already)
#   scripts/k8s-cluster.sh status    the node and the daemons, or why the cluster is not up
#   scripts/k8s-cluster.sh stop      delete planrun's objects, stop every daemon this script
#                                    started (the API server before etcd), remove the network
#                                    namespace; no daemon is left behind
#   scripts/k8s-cluster.sh image     build planrun (static) and import it as the agent image
#   scripts/k8s-cluster.sh env       print the export line that points kubeconfig users here
#   scripts/k8s-cluster.sh release   stop the cluster if the tests started it and no test
#                                    process still uses it (scripts/test.sh and the tests'
#                                    TestMain run it when they end)
#
# The binaries come from a tools module of their own (tools/k8s/go.mod: k8s.io/kubernetes
# v1.37.2 with its 33 staging modules at v0.37.2, and etcd), so planrun's go.mod never carries
# Kubernetes; the version is stamped so the node reports v1.37.2. CoreDNS (v1.15.0, with the
# plugins the cluster needs) is a module of its own too, tools/k8s/coredns, with a stamp of
# its own, so that adding it rebuilt nothing else. The cluster's state, logs,
# certificates and kubeconfig go to $PLANRUN_K8S_DIR (default /tmp/planrun-k8s). Its kubeconfig
# has the context "planrun", whose namespace "planrun" the example and the tests use; it is
# linked from ~/.kube/config only where no such file is there (stop removes the link).
#
# Traffic stays on this machine: the API server, etcd and the controllers listen on 127.0.0.1;
# the kubelet, which refuses a loopback node address, listens on 198.18.0.1, the host end of a
# veth pair whose other end is in the network namespace "planrun-k8s" this script creates
# (198.18.0.0/15 is set aside for benchmark tests, RFC 2544); the API server reaches the
# kubelet there for pod logs. Pods use the host network; the Service range (198.18.128.0/24)
# holds only objects, since no kube-proxy runs. CoreDNS serves cluster.local on 198.18.0.1:53
# from the API server's Services and EndpointSlices (a headless Service's pods by name), the
# kubelet's clusterDNS; it forwards nothing, so a name outside the cluster gets no answer from
# it and no query leaves this machine.
#
# Leases work as in scripts/slurm-cluster.sh: test processes (internal/testkit/k8stest) hold a shared
# lock on $dir/tests.lock and mark a cluster they started with $dir/started-by-tests; release
# stops it under an exclusive lock; start and stop take $dir/start.lock.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${PLANRUN_K8S_DIR:-/tmp/planrun-k8s}"
tools="$root/.tools/k8s"
bin="$tools/bin"
K8S_VERSION=v1.37.2
sock=/run/planrun-containerd/containerd.sock
netns=planrun-k8s
node_ip=198.18.0.1
ns_ip=198.18.0.2
node=planrun-node
api_port=16443
etcd_port=23790
lease="$dir/tests.lock"
marker="$dir/started-by-tests"
startlock="$dir/start.lock"
kubeconfig="$dir/kubeconfig"
agent_tag="${PLANRUN_K8S_IMAGE:-planrun:dev}"
COREDNS_VERSION=v1.15.0
dns_ready_port=18154
daemons=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler coredns kubelet)
say() { echo "k8s-cluster: $*" >&2; }

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    say "must run as root (the kubelet and containerd run as root)"
    exit 1
  fi
}

# stamp names the version and the recipe (the tools modules' go.sum and this build's flags),
# so a change to either rebuilds.
stamp() {
  local h
  h=$(cat "$root/tools/k8s/go.sum" "$root/tools/k8s/pause/go.sum" "$root/tools/k8s/pause/main.go" |
    sha256sum | cut -c1-12)
  echo "$tools/.k8s-$K8S_VERSION-$h-static"
}

built() { [[ -f $(stamp) ]] && for d in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet pause; do [[ -x $bin/$d ]] || return 1; done; }

# coredns_stamp: CoreDNS's version and its module's files.
coredns_stamp() {
  local h
  h=$(cat "$root/tools/k8s/coredns/go.mod" "$root/tools/k8s/coredns/go.sum" "$root/tools/k8s/coredns/main.go" |
    sha256sum | cut -c1-12)
  echo "$tools/.coredns-$COREDNS_VERSION-$h-static"
}

coredns_built() { [[ -f $(coredns_stamp) && -x $bin/coredns ]]; }

build() {
  build_kubernetes
  build_coredns
}

build_kubernetes() {
  if built; then
    say "binaries of Kubernetes $K8S_VERSION already in .tools/k8s/bin"
    return 0
  fi
  say "building Kubernetes $K8S_VERSION (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet) and etcd"
  say "from the Go module proxy into .tools/k8s/bin: about 25 minutes on 2 cores, only the first time"
  mkdir -p "$bin"
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
  local started t0 c pkg
  started=$(date +%s)
  for c in etcd kube-scheduler kubelet kube-controller-manager kube-apiserver; do
    t0=$(date +%s)
    pkg=k8s.io/kubernetes/cmd/$c
    [[ $c == etcd ]] && pkg=go.etcd.io/etcd/server/v3
    (cd "$root/tools/k8s" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$bin/$c" "$pkg")
    say "built $c in $(($(date +%s) - t0))s (load $(cut -d' ' -f1-3 /proc/loadavg))"
  done
  (cd "$root/tools/k8s/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/pause" .)
  rm -f "$tools"/.k8s-*
  touch "$(stamp)"
  say "built in $(($(date +%s) - started))s"
}

build_coredns() {
  if coredns_built; then
    say "CoreDNS $COREDNS_VERSION already in .tools/k8s/bin"
    return 0
  fi
  say "building CoreDNS $COREDNS_VERSION (the cluster DNS) into .tools/k8s/bin: about 2 minutes on 2 cores, only the first time"
  mkdir -p "$bin"
  local t0
  t0=$(date +%s)
  (cd "$root/tools/k8s/coredns" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/coredns" .)
  rm -f "$tools"/.coredns-*
  touch "$(coredns_stamp)"
  say "built coredns in $(($(date +%s) - t0))s (load $(cut -d' ' -f1-3 /proc/loadavg))"
}

# containerd, runc, the CNI plugins and the tools above, from the one list of Debian packages.
install_packages() { "$root/scripts/install-system.sh" k8s; }

running() { [[ -f "$dir/$1.pid" ]] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

# daemon NAME ARGS...: starts NAME in the background, its log in $dir/log/NAME.log.
daemon() {
  local name=$1
  shift
  running "$name" && return 0
  # 8>&- 9>&-: a daemon must not inherit the start lock or a test's lease.
  setsid "$@" >"$dir/log/$name.log" 2>&1 </dev/null 8>&- 9>&- &
  echo $! >"$dir/$name.pid"
}

lock_start() {
  mkdir -p "$dir"
  exec 8>>"$startlock"
  flock -x 8
}

network() {
  ip netns list 2>/dev/null | grep -qw "$netns" || ip netns add "$netns"
  if ! ip link show pk8s0 >/dev/null 2>&1; then
    ip link add pk8s0 type veth peer name pk8s1
    ip link set pk8s1 netns "$netns"
    ip addr add "$node_ip/30" dev pk8s0
    ip -n "$netns" addr add "$ns_ip/30" dev pk8s1
    ip -n "$netns" link set lo up
    ip -n "$netns" link set pk8s1 up
    ip link set pk8s0 up
  fi
}

certs() {
  local pki="$dir/pki"
  [[ -f $pki/apiserver.crt && -f $pki/sa.key ]] && return 0
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=planrun-test-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$pki/apiserver.key" \
    -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:198.18.128.1,DNS:localhost,DNS:kubernetes.default.svc\n' >"$pki/san.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -extfile "$pki/san.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$pki/token"
  printf '%s,admin,admin,system:masters\n' "$(cat "$pki/token")" >"$pki/tokens.csv"
  chmod 600 "$pki"/*.key "$pki/token" "$pki/tokens.csv"
}

write_kubeconfig() {
  local ca
  ca=$(base64 -w0 <"$dir/pki/ca.crt")
  cat >"$kubeconfig.new" <<EOF
# Written by planrun's scripts/k8s-cluster.sh: the single-node test cluster.
apiVersion: v1
kind: Config
clusters:
- name: planrun
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $(cat "$dir/pki/token")
contexts:
- name: planrun
  context:
    cluster: planrun
    user: admin
    namespace: planrun
current-context: planrun
EOF
  chmod 600 "$kubeconfig.new"
  mv -f "$kubeconfig.new" "$kubeconfig"
  if [[ ! -e $HOME/.kube/config && ! -L $HOME/.kube/config ]]; then
    mkdir -p "$HOME/.kube"
    ln -s "$kubeconfig" "$HOME/.kube/config"
  fi
}

write_configs() {
  mkdir -p "$dir/log" "$dir/cni" "$dir/containerd" "$dir/kubelet" "$dir/pod-logs"
  cat >"$dir/cni/10-loopback.conflist" <<'EOF'
{"cniVersion": "1.0.0", "name": "planrun-loopback", "plugins": [{"type": "loopback"}]}
EOF
  # restrict_oom_score_adj: without CAP_SYS_RESOURCE every sandbox fails in runc ("can't
  # get final child's PID from pipe"). The native snapshotter: no overlay on an overlay root.
  cat >"$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "/run/planrun-containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "planrun.local/pause:1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni"
EOF
  # This kernel has cgroup v1: failCgroupV1 false, cgroupfs, and no QoS cgroups.
  cat >"$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
podLogsDir: $dir/pod-logs
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 30
clusterDomain: cluster.local
clusterDNS: [$node_ip]
resolvConf: /etc/resolv.conf
containerLogMaxSize: 50Mi
EOF
  # The cluster DNS: cluster.local from the API server, nothing forwarded.
  cat >"$dir/Corefile" <<EOF
.:53 {
    bind $node_ip
    ready 127.0.0.1:$dns_ready_port
    errors
    kubernetes cluster.local {
        kubeconfig $kubeconfig planrun
    }
}
EOF
}

api() { curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $(cat "$dir/pki/token")" "https://127.0.0.1:$api_port$1" "${@:2}"; }

ctr_() { ctr --address "$sock" -n k8s.io "$@"; }

# import_image FILE: imports a docker-archive tarball for the kubelet.
import_image() { ctr_ images import --snapshotter native "$1" >/dev/null; }

# image: builds planrun (static) from this checkout and imports it as $agent_tag.
image() {
  local out="$tools/agent"
  mkdir -p "$out"
  # Static (no cgo): the image has no C library. Without Kubernetes placement (-tags nokube):
  # a pod places no Jobs. build-planrun.sh stamps the commit.
  CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -tags=nokube" "$root/scripts/build-planrun.sh" "$out/planrun"
  "$out/planrun" image -binary "$out/planrun" -tag "$agent_tag" -o "$out/planrun-image.tar" >/dev/null
  import_image "$out/planrun-image.tar"
  say "imported the agent image $agent_tag (planrun built from $root)"
}

# dns_ready START_NS: waits until CoreDNS has read the API server (its ready endpoint), and
# says how long that took from START_NS (date +%s%N).
dns_ready() {
  for _ in $(seq 1 120); do
    if curl -sf "http://127.0.0.1:$dns_ready_port/ready" >/dev/null 2>&1; then
      say "CoreDNS ready on $node_ip:53, $((($(date +%s%N) - $1) / 1000000)) ms after it started"
      return 0
    fi
    running coredns || break
    sleep 0.1
  done
  say "CoreDNS did not become ready; its log:"
  tail -n 20 "$dir/log/coredns.log" >&2
  stop_daemons
  exit 1
}

# up: every daemon runs and the node is Ready.
up() {
  for d in "${daemons[@]}"; do running "$d" || return 1; done
  api "/api/v1/nodes/$node" 2>/dev/null | grep -q '"type": *"Ready", *"status": *"True"' ||
    api "/api/v1/nodes/$node" 2>/dev/null | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'
}

start() {
  need_root
  lock_start
  if up; then
    say "already up: node $node (kubeconfig $kubeconfig)"
    image
    return 0
  fi
  build
  install_packages
  local t0
  t0=$(date +%s)
  network
  certs
  # A cluster an older script started (without the cluster DNS) may be in use: it is not
  # touched, and not taken for this one.
  if running kubelet && ! grep -q '^clusterDNS:' "$dir/kubelet.yaml" 2>/dev/null; then
    say "a cluster without the cluster DNS (started by an older scripts/k8s-cluster.sh) runs here: stop it first (scripts/k8s-cluster.sh stop)"
    exit 1
  fi
  write_configs
  write_kubeconfig
  local pki="$dir/pki"
  daemon containerd containerd --config "$dir/containerd.toml"
  daemon etcd "$bin/etcd" --name planrun --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
    --initial-cluster planrun=http://127.0.0.1:23800 --listen-metrics-urls "" --log-level warn
  daemon kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --secure-port "$api_port" --advertise-address "$node_ip" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
    --token-auth-file "$pki/tokens.csv" --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range 198.18.128.0/24 \
    --endpoint-reconciler-type none --kubelet-preferred-address-types InternalIP --profiling=false
  # The controllers exit when the API server does not answer yet: wait for it.
  for _ in $(seq 1 120); do
    api /readyz >/dev/null 2>&1 && break
    if ! running kube-apiserver || ! running etcd; then
      say "the API server or etcd exited; their logs:"
      tail -n 20 "$dir/log/etcd.log" "$dir/log/kube-apiserver.log" >&2
      stop_daemons
      exit 1
    fi
    sleep 0.5
  done
  local admin="$dir/kubeconfig"
  daemon kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$admin" \
    --authentication-kubeconfig "$admin" --authorization-kubeconfig "$admin" \
    --bind-address 127.0.0.1 --leader-elect=false --service-account-private-key-file "$pki/sa.key" \
    --root-ca-file "$pki/ca.crt" --use-service-account-credentials=false --profiling=false
  daemon kube-scheduler "$bin/kube-scheduler" --kubeconfig "$admin" \
    --authentication-kubeconfig "$admin" --authorization-kubeconfig "$admin" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  local dns0
  dns0=$(date +%s%N)
  daemon coredns "$bin/coredns" -conf "$dir/Corefile"
  # The sandbox image before the kubelet asks for it.
  for _ in $(seq 1 50); do [[ -S $sock ]] && break; sleep 0.2; done
  "$bin/pause" -image "$dir/pause.tar" -tag planrun.local/pause:1
  import_image "$dir/pause.tar"
  daemon kubelet "$bin/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$admin" \
    --node-ip "$node_ip" --hostname-override "$node" --root-dir "$dir/kubelet"
  for _ in $(seq 1 120); do
    if up; then
      local ready=$(($(date +%s) - t0))
      dns_ready "$dns0"
      api /api/v1/namespaces -X POST -H 'Content-Type: application/json' \
        -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"planrun"}}' >/dev/null 2>&1 || true
      image
      [[ ${1:-} == --tests ]] && : >"$marker"
      say "up in $(($(date +%s) - t0))s (node Ready after ${ready}s, then the agent image): node $node ($node_ip), context planrun, namespace planrun (kubeconfig $kubeconfig)"
      return 0
    fi
    for d in "${daemons[@]}"; do
      if ! running "$d"; then
        say "$d exited; its log:"
        tail -n 20 "$dir/log/$d.log" >&2
        stop_daemons
        exit 1
      fi
    done
    sleep 0.5
  done
  say "the node did not become Ready in 60 s; logs in $dir/log"
  tail -n 15 "$dir/log/kubelet.log" >&2 || true
  stop_daemons
  exit 1
}

stop_pid() {
  local name=$1
  running "$name" || { rm -f "$dir/$name.pid"; return 0; }
  local pid
  pid=$(cat "$dir/$name.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$dir/$name.pid"; return 0; }
    sleep 0.2
  done
  say "$name did not stop on SIGTERM; killing it"
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/$name.pid"
}

# containers_gone stops what containerd runs for the cluster: its shims and their pods.
containers_gone() {
  [[ -S $sock ]] || return 0
  local t
  for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$t" >/dev/null 2>&1 || true; done
  sleep 0.5
  for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1 || true; done
  for t in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$t" >/dev/null 2>&1 || true; done
}

stop_daemons() {
  # The kubelet first (no pod is restarted), then the containers, then the control plane:
  # the API server before etcd.
  stop_pid kubelet
  containers_gone
  stop_pid coredns
  stop_pid kube-scheduler
  stop_pid kube-controller-manager
  stop_pid kube-apiserver
  stop_pid etcd
  stop_pid containerd
  # A shim of this containerd whose task would not die.
  local p
  for p in $(pgrep -f "containerd-shim-runc-v2 -namespace k8s.io -address $sock" || true); do kill -9 "$p" 2>/dev/null || true; done
  # The kubelet's mounts (emptyDir, ConfigMap volumes) under its root directory.
  local m
  for m in $( (grep -o " $dir/kubelet[^ ]*\| /run/planrun-containerd[^ ]*" /proc/mounts || true) | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

stop() {
  need_root
  lock_start
  stop_daemons
  if ip link show pk8s0 >/dev/null 2>&1; then ip link del pk8s0; fi
  ip netns list 2>/dev/null | grep -qw "$netns" && ip netns del "$netns"
  if [[ -L $HOME/.kube/config && $(readlink "$HOME/.kube/config") == "$kubeconfig" ]]; then
    rm -f "$HOME/.kube/config"
  fi
  # The next start begins from an empty cluster: etcd's data and the kubelet's state go.
  rm -rf "$dir/etcd" "$dir/kubelet" "$dir/containerd" "$dir/pod-logs" /run/planrun-containerd
  rm -f "$marker"
  say "stopped"
}

release() {
  if [[ ! -f $marker ]]; then
    if running kube-apiserver; then
      say "running, but not started by the tests: left running (scripts/k8s-cluster.sh stop ends it)"
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
  local down=0
  for d in "${daemons[@]}"; do
    if running "$d"; then echo "$d: running (pid $(cat "$dir/$d.pid"))"; else echo "$d: not running"; down=1; fi
  done
  if ((down)); then
    say "not up (start it with scripts/k8s-cluster.sh start)"
    exit 1
  fi
  if up; then echo "node $node: Ready ($node_ip), kubeconfig $kubeconfig"; else
    echo "node $node: not Ready"
    exit 1
  fi
}

case "${1:-}" in
build) build ;;
start) start "${2:-}" ;;
stop) stop ;;
status) status ;;
image) need_root; image ;;
env) echo "export KUBECONFIG=$kubeconfig" ;;
release) release ;;
*)
  echo "usage: scripts/k8s-cluster.sh build|start|stop|status|image|env|release" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# A real single-node Kubernetes as local processes, without Docker or kind (what Kubernetes' hack/local-up-cluster.sh
# does): etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy built from the Go module
# proxy (test/k8s/build-binaries.sh node), Debian's containerd + runc with a config of its own, the CNI bridge plugin.
# Images come from test/e2e/images.sh (no registry).
#
#   bash test/e2e/local-cluster.sh up      # idempotent; prints the kubeconfig path
#   bash test/e2e/local-cluster.sh down    # removes every process, mount, netns, cgroup, bridge and iptables rule it made
#   bash test/e2e/local-cluster.sh env     # KUBECONFIG=... and the addresses, for a shell
#
# Addresses are reserved for network tests and stay on this machine: the node (and the bridge) is 198.18.0.1, pods get
# 198.18.0.0/24, Services 198.19.0.0/16 (routed to the bridge, never off the machine). Pods have a route to
# 198.18.0.0/15 only; nothing is masqueraded to the outside. Redis, Postgres and fake upstreams on the host listen on
# 198.18.0.1, which pods reach directly.
# Root is required (containerd, mounts, iptables). Only one such node per machine: a lock serializes users.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

dir="${SVC_E2E_NODE_DIR:-/tmp/svc-e2e-node}"
node_ip=198.18.0.1
pod_cidr=198.18.0.0/24
service_cidr=198.19.0.0/16
bridge=svce2e0
node_name=svc-e2e-node
sock="$dir/containerd/containerd.sock"
kubeconfig="$dir/kubeconfig"
kubelet_sysctls="vm.overcommit_memory kernel.panic kernel.panic_on_oops"

log() { printf '[local-cluster] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

pidfile() { echo "$dir/pids/$1"; }
running() { local p; p="$(cat "$(pidfile "$1")" 2>/dev/null)" && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# $1 name, rest: command. Own session, log in $dir/logs/<name>.log.
start() {
  local name="$1"
  shift
  if running "$name"; then return; fi
  # fd 7 is our lock: the daemons must not keep it.
  setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null 7>&- &
  echo $! >"$(pidfile "$name")"
}

stop() {
  local name="$1" p i
  p="$(cat "$(pidfile "$name")" 2>/dev/null)" || return 0
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$p" 2>/dev/null || true
  fi
  rm -f "$(pidfile "$name")"
}

# $1 what, $2 seconds, rest: a command that succeeds when ready.
wait_for() {
  local what="$1" seconds="$2" i
  shift 2
  for i in $(seq $((seconds * 2))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  log "timed out after ${seconds}s waiting for $what; last lines of the logs:"
  tail -n 15 "$dir"/logs/*.log >&2 || true
  return 1
}

kc() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

make_pki() {
  local p="$dir/pki"
  [ -f "$p/admin.crt" ] && return
  mkdir -p "$p"
  (
    cd "$p"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=svc-e2e-ca" 2>/dev/null
    cat >apiserver.ext <<EOF
subjectAltName = IP:$node_ip, IP:198.19.0.1, IP:127.0.0.1, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage = serverAuth
EOF
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 2 -extfile apiserver.ext 2>/dev/null
    printf 'extendedKeyUsage = clientAuth\n' >client.ext
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=svc-e2e-admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 2 -extfile client.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    chmod 600 ./*.key
  )
  cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: svc-e2e
    cluster: { server: "https://$node_ip:6443", certificate-authority: "$p/ca.crt" }
users:
  - name: admin
    user: { client-certificate: "$p/admin.crt", client-key: "$p/admin.key" }
contexts:
  - name: svc-e2e
    context: { cluster: svc-e2e, user: admin }
current-context: svc-e2e
EOF
  chmod 600 "$kubeconfig"
}

network_up() {
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
  fi
  ip addr show dev "$bridge" | grep -q "inet $node_ip/" || ip addr add "$node_ip/24" dev "$bridge"
  ip link set "$bridge" up
  # Service addresses go to the bridge (kube-proxy DNATs them to pods): they never leave the machine.
  ip route replace "$service_cidr" dev "$bridge" src "$node_ip"
}

write_configs() {
  mkdir -p "$dir/cni/net.d" "$dir/cni/ipam" "$dir/containerd" "$dir/kubelet" "$dir/pod-logs"
  cat >"$dir/cni/net.d/10-svc-e2e.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "svc-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{ "subnet": "$pod_cidr", "rangeStart": "198.18.0.10", "rangeEnd": "198.18.0.250", "gateway": "$node_ip" }]],
        "routes": [{ "dst": "198.18.0.0/15" }]
      }
    }
  ]
}
EOF
  cat >"$dir/containerd/config.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/svc-e2e/pause:3.10"
  # This sandbox has no CAP_SYS_RESOURCE: nobody may lower an oom_score_adj (sandboxes would ask for -998).
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
EOF
  cat >"$dir/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: $node_ip
healthzPort: 10248
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
podLogsDir: $dir/pod-logs
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $dir/pki/ca.crt }
authorization: { mode: Webhook }
clusterDomain: cluster.local
serializeImagePulls: false
# The machine's disk is shared: evict only when really short, and never collect our images.
evictionHard: { memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%" }
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
maxPods: 60
EOF
  cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $kubeconfig }
mode: iptables
clusterCIDR: $pod_cidr
bindAddress: $node_ip
healthzBindAddress: $node_ip:10256
metricsBindAddress: $node_ip:10249
hostnameOverride: $node_name
nodePortAddresses: ["$node_ip/32"]
# Leave the machine's conntrack settings as they are.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
EOF
}

up() {
  [ "$(id -u)" = 0 ] || die "must run as root (containerd, mounts, iptables)"
  for tool in containerd runc ctr ip iptables openssl conntrack; do
    command -v "$tool" >/dev/null 2>&1 || die "needs $tool (Debian: apt-get install containerd runc containernetworking-plugins conntrack iptables)"
  done
  [ -x /usr/lib/cni/bridge ] || die "needs the CNI plugins in /usr/lib/cni (Debian: apt-get install containernetworking-plugins)"
  bin="$(bash "$repo/test/k8s/build-binaries.sh" node)"
  mkdir -p "$dir/pids" "$dir/logs"
  make_pki
  network_up
  write_configs
  local p="$dir/pki"

  start etcd "$bin/etcd" --data-dir="$dir/etcd" --name=default \
    --listen-client-urls="http://$node_ip:12379" --advertise-client-urls="http://$node_ip:12379" \
    --listen-peer-urls="http://$node_ip:12380" --initial-advertise-peer-urls="http://$node_ip:12380" \
    --initial-cluster="default=http://$node_ip:12380" --unsafe-no-fsync --log-level=warn
  wait_for etcd 60 curl -fsS "http://$node_ip:12379/health"

  start kube-apiserver "$bin/kube-apiserver" --etcd-servers="http://$node_ip:12379" \
    --bind-address="$node_ip" --advertise-address="$node_ip" --secure-port=6443 \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --kubelet-client-certificate="$p/admin.crt" --kubelet-client-key="$p/admin.key" --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range="$service_cidr" --cert-dir="$dir/apiserver-certs" --profiling=false
  wait_for kube-apiserver 120 curl -fsS --cacert "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" "https://$node_ip:6443/readyz"

  start containerd containerd --config "$dir/containerd/config.toml"
  wait_for containerd 60 ctr --address "$sock" version
  bash "$here/images.sh" load "$sock"

  start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$kubeconfig" \
    --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
    --bind-address="$node_ip" --secure-port=10257 --leader-elect=false --root-ca-file="$p/ca.crt" \
    --service-account-private-key-file="$p/sa.key" --service-cluster-ip-range="$service_cidr" \
    --cluster-cidr="$pod_cidr" --allocate-node-cidrs=false --profiling=false
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$kubeconfig" \
    --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
    --bind-address="$node_ip" --secure-port=10259 --leader-elect=false --profiling=false
  # The kubelet sets these kernel tunables to its liking (protectKernelDefaults: false): kept to be restored by down.
  [ -f "$dir/sysctl.saved" ] || sysctl -e $kubelet_sysctls >"$dir/sysctl.saved"
  start kubelet "$bin/kubelet" --config="$dir/kubelet/config.yaml" --kubeconfig="$kubeconfig" \
    --root-dir="$dir/kubelet/root" --cert-dir="$dir/kubelet/pki" --hostname-override="$node_name" --node-ip="$node_ip"
  start kube-proxy "$bin/kube-proxy" --config="$dir/kube-proxy.yaml"

  wait_for "node $node_name Ready" 180 kc wait --for=condition=Ready "node/$node_name" --timeout=1s
  wait_for "the default ServiceAccount" 60 kc get serviceaccount default -n default
  wait_for "kube-root-ca.crt" 60 kc get configmap kube-root-ca.crt -n default
  echo "$kubeconfig"
}

# Deletes the chains (KUBE-*) the kubelet and kube-proxy made, and the jumps to them, in every table.
iptables_down() {
  local ipt table chain rule
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null 2>&1 || continue
    for table in filter nat mangle; do
      { "$ipt" -t "$table" -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j KUBE-' || true; } | while read -r rule; do
        # The rule as iptables printed it (its comments quoted): eval keeps the quoting.
        eval "$ipt -t $table ${rule/-A/-D}" 2>/dev/null || true
      done
      for chain in $("$ipt" -t "$table" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p'); do
        "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$ipt" -t "$table" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p'); do
        "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

# Kills the processes left in the pods' cgroups (containers whose shim is gone), then removes the cgroups.
cgroups_down() {
  local root cg pid
  for root in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods; do
    [ -d "$root" ] || continue
    for pid in $(find "$root" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  for root in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods; do
    [ -d "$root" ] || continue
    { find "$root" -depth -type d 2>/dev/null || true; } | while read -r cg; do rmdir "$cg" 2>/dev/null || true; done
  done
}

down() {
  [ "$(id -u)" = 0 ] || die "must run as root"
  local name id pid
  for name in kube-proxy kubelet kube-scheduler kube-controller-manager; do stop "$name"; done
  if running containerd; then
    for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 1
    for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$sock" -n k8s.io tasks rm -f "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null); do
      ctr --address "$sock" -n k8s.io containers rm "$id" >/dev/null 2>&1 || true
    done
  fi
  stop containerd
  # The shims of our containerd (their -address names our socket) outlive it.
  for pid in $(pgrep -f -- "-address $sock" 2>/dev/null || true); do kill -KILL "$pid" 2>/dev/null || true; done
  cgroups_down
  for name in kube-apiserver etcd; do stop "$name"; done
  # The kernel tunables the kubelet changed, as they were before it started.
  if [ -f "$dir/sysctl.saved" ]; then
    sed 's/ = /=/' "$dir/sysctl.saved" | while read -r kv; do sysctl -q -w "$kv" || true; done
  fi
  # Mounts under our directory (sandboxes' shm, rootfs, volumes, the kubelet root), deepest first.
  if [ -d "$dir" ]; then
    { findmnt -rn -o TARGET | grep -F "$dir/" || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  fi
  for name in /run/netns/cni-*; do [ -e "$name" ] && { ip netns del "$(basename "$name")" 2>/dev/null || true; }; done
  iptables_down
  ip route del "$service_cidr" dev "$bridge" 2>/dev/null || true
  ip link del "$bridge" 2>/dev/null || true
  for name in /var/log/containers/*; do
    [ -L "$name" ] && case "$(readlink "$name")" in "$dir"/*) rm -f "$name" ;; esac
  done
  rmdir /var/log/containers 2>/dev/null || true
  rm -rf "$dir"
  log "down: nothing left"
}

case "${1:-}" in
  up)
    mkdir -p "$(dirname "$dir")"
    exec 7>"$dir.lock"
    flock 7
    if ! up; then
      log "up failed: taking everything down again"
      down
      exit 1
    fi
    ;;
  down)
    exec 7>"$dir.lock"
    flock 7
    down
    ;;
  env)
    echo "KUBECONFIG=$kubeconfig"
    echo "NODE_IP=$node_ip"
    ;;
  *) echo "usage: $0 up | down | env" >&2; exit 2 ;;
esac

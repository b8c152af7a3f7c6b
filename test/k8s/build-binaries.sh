#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver + etcd, and a kubectl of the same version) from the Go module proxy,
# to run the way controller-runtime's envtest runs them. No Docker here, so no kind; and k8s.io/kubernetes cannot be
# `go install`ed (its go.mod replaces the staging modules with local paths), so we write a go.mod of our own that
# replaces each staging module with its published version.
#
#   bash test/k8s/build-binaries.sh        # builds what is missing; prints the directory holding the binaries
#   bash test/k8s/build-binaries.sh node   # also kubelet, kube-controller-manager, kube-scheduler, kube-proxy
#                                          # (the single-node cluster of test/e2e/local-cluster.sh)
#
# Idempotent: binaries already in the cache are kept. If KUBEBUILDER_ASSETS (the envtest convention) holds
# every binary asked for, nothing is built and that directory is printed.
# Cache: ${SVC_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/k8s}/<k8s version>/{kube-apiserver,etcd,kubectl,...}
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

binaries=(etcd kube-apiserver kubectl)
node_binaries=(kubelet kube-controller-manager kube-scheduler kube-proxy)
case "${1:-}" in
  "") ;;
  node) binaries+=("${node_binaries[@]}") ;;
  *) echo "usage: $0 [node]" >&2; exit 2 ;;
esac
missing() { local b; for b in "${binaries[@]}"; do [ -x "$1/$b" ] || return 0; done; return 1; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && ! missing "$KUBEBUILDER_ASSETS"; then
  echo "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS" >&2
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

cache="${SVC_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/k8s}/$K8S_VERSION"
if ! missing "$cache"; then
  echo "$cache"
  exit 0
fi

go_bin="$(command -v go || echo /usr/local/go/bin/go)"
if [ ! -x "$go_bin" ]; then
  echo "Go is required to build kube-apiserver and etcd (https://go.dev/doc/install), or set KUBEBUILDER_ASSETS" >&2
  exit 1
fi

# 2 cores and a few GB: a wider build only thrashes. Callers may override. GOTOOLCHAIN=local: never fetch another Go.
export CGO_ENABLED=0 GOTOOLCHAIN=local
export GOMAXPROCS="${GOMAXPROCS:-2}" GOFLAGS="${GOFLAGS:--p=2}"

mkdir -p "$cache"
# One build at a time per cache (parallel test runs or developers share it); re-check after waiting.
exec 9>"$cache/.lock"
flock 9

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A module that requires k8s.io/kubernetes and points every staging module (the `k8s.io/<m> => ./staging/...`
# lines of Kubernetes' own go.mod, 31 in 1.34) at its published v0.<minor>.<patch>.
prepare_kubernetes_module() {
  local staging_version="v0.${K8S_VERSION#v1.}" kmod n
  mkdir -p "$work/kube" && cd "$work/kube"
  kmod="$("$go_bin" mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
  [ -f "$kmod" ] || { echo "could not download k8s.io/kubernetes@$K8S_VERSION" >&2; exit 1; }
  {
    printf 'module svc-gateway.local/k8s-build\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
    sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/k8s\.io/.*$#\t\1 => \1 '"$staging_version"'#p' "$kmod"
    printf ')\n'
  } >go.mod
  n="$(grep -c '=> k8s.io/' go.mod)"
  echo "k8s.io/kubernetes $K8S_VERSION: $n staging modules replaced with $staging_version" >&2
  [ "$n" -gt 20 ] || { echo "unexpected go.mod of k8s.io/kubernetes: only $n staging modules" >&2; exit 1; }
  local b pkgs=()
  for b in "${binaries[@]}"; do [ "$b" = etcd ] || pkgs+=("k8s.io/kubernetes/cmd/$b@$K8S_VERSION"); done
  "$go_bin" get "${pkgs[@]}"
}

# $1: binary name, $2: package. Version stamps as the release build sets them, so /version and kubectl report one.
build_kubernetes_binary() {
  local minor="${K8S_VERSION#v1.}" flags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
  done
  (cd "$work/kube" && "$go_bin" build -trimpath -ldflags "$flags" -o "$cache/.$1.tmp" "$2")
  mv "$cache/.$1.tmp" "$cache/$1"
}

build_etcd() {
  mkdir -p "$work/etcd" && cd "$work/etcd"
  "$go_bin" mod init svc-gateway.local/etcd-build >/dev/null 2>&1
  "$go_bin" get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  "$go_bin" build -trimpath -ldflags "-s -w" -o "$cache/.etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$cache/.etcd.tmp" "$cache/etcd"
}

start=$SECONDS
if [ ! -x "$cache/etcd" ]; then
  echo "building etcd $ETCD_VERSION into $cache (about a minute)" >&2
  build_etcd
fi
kube_missing=()
for b in "${binaries[@]}"; do [ "$b" = etcd ] || [ -x "$cache/$b" ] || kube_missing+=("$b"); done
if [ "${#kube_missing[@]}" -gt 0 ]; then
  echo "building ${kube_missing[*]} $K8S_VERSION into $cache (cold: 10+ minutes, about 3 GB of memory)" >&2
  prepare_kubernetes_module
  for b in "${kube_missing[@]}"; do build_kubernetes_binary "$b" "k8s.io/kubernetes/cmd/$b"; done
fi
echo "built in $((SECONDS - start)) s" >&2
echo "$cache"

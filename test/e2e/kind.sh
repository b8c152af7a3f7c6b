#!/usr/bin/env bash
# The end-to-end test on kind, for those with Docker (or Podman) and kind: the same test body as the local node of
# `npm test` (test/e2e/node.test.ts; the cluster differs, the checks do not). This script makes the cluster and the
# image; the test installs the chart with helm as its README says, applies the README's manifests, calls with the
# SDKs, and the rest (replicas, upgrade under traffic, leader failover, console, Prometheus, uninstall).
#
# Needs on PATH: kind, docker, kubectl, helm (v3.8+ or v4), node 24 (npm ci done), redis-server, Postgres' initdb and
# pg_ctl, prometheus, chromium (or SVC_CHROMIUM). Redis, Postgres and the fake upstreams run on the host, on the kind
# network's gateway address, which the pods reach; the test reaches pods and Services with `kubectl port-forward`.
#
#   bash test/e2e/kind.sh              # KEEP=1 keeps the cluster afterwards; KIND_CLUSTER names it
set -euo pipefail
cd "$(dirname "$0")/../.."

cluster="${KIND_CLUSTER:-svc-gateway-e2e}"
image=svc-gateway:e2e

for tool in kind docker kubectl helm npx; do
  command -v "$tool" >/dev/null 2>&1 || { echo "kind.sh needs $tool on PATH" >&2; exit 1; }
done
step() { printf '\n== %s\n' "$*"; }

work="$(mktemp -d)"
cleanup() {
  if [ "${KEEP:-0}" != 1 ]; then kind delete cluster --name "$cluster" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step "kind cluster $cluster (pods 198.18.0.0/16, Services 198.19.0.0/16)"
cat >"$work/kind.yaml" <<'YAML'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking: { podSubnet: 198.18.0.0/16, serviceSubnet: 198.19.0.0/16 }
YAML
kind get clusters 2>/dev/null | grep -qx "$cluster" || kind create cluster --name "$cluster" --config "$work/kind.yaml" --wait 120s
kind get kubeconfig --name "$cluster" >"$work/kubeconfig"

step "image $image (the repository's Dockerfile)"
docker build -t "$image" .
kind load docker-image "$image" --name "$cluster"

step "the end-to-end test (test/e2e/node.test.ts) on kind"
host="$(docker network inspect kind -f '{{range .IPAM.Config}}{{if .Gateway}}{{.Gateway}} {{end}}{{end}}' | tr ' ' '\n' | grep -m1 '\.')"
E2E_CLUSTER=kind E2E_KUBECONFIG="$work/kubeconfig" E2E_HOST_ADDRESS="$host" E2E_IMAGE="docker.io/library/$image" \
  npx vitest run test/e2e/node.test.ts
echo
echo "kind end to end: passed"

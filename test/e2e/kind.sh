#!/usr/bin/env bash
# End to end on kind: create a cluster, build and load the image, helm install the chart (with a throwaway Redis and
# Postgres), apply sample manifests, call the gateway with curl, check the usage row in Postgres.
#
# For users with Docker (or Podman) and kind, kubectl, helm, curl on PATH. kind cannot run on our CI machines (they
# have no container engine), so CI never runs this script: there, test/chart/*.test.ts render, lint and dry-run the
# chart against a real kube-apiserver, run the operator under the chart's RBAC, and check the image statically.
#
#   bash test/e2e/kind.sh              # KEEP=1 keeps the cluster afterwards; KIND_CLUSTER names it
set -euo pipefail
cd "$(dirname "$0")/../.."

cluster="${KIND_CLUSTER:-svc-gateway-e2e}"
ns=svc-gateway
release=svc-gateway
image=svc-gateway:e2e
port="${E2E_PORT:-18080}"

for tool in kind docker kubectl helm curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "kind.sh needs $tool on PATH" >&2; exit 1; }
done
step() { printf '\n== %s\n' "$*"; }

cleanup() {
  if [ -n "${forward_pid:-}" ]; then kill "$forward_pid" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" != 1 ]; then kind delete cluster --name "$cluster" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

step "kind cluster $cluster"
kind get clusters 2>/dev/null | grep -qx "$cluster" || kind create cluster --name "$cluster" --wait 120s
kubectl config use-context "kind-$cluster" >/dev/null

step "image $image"
docker build -t "$image" .
kind load docker-image "$image" --name "$cluster"

step "Redis and Postgres for the test (throwaway, in-cluster)"
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -n "$ns" -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: { name: redis }
spec:
  selector: { matchLabels: { app: redis } }
  template:
    metadata: { labels: { app: redis } }
    spec: { containers: [{ name: redis, image: "redis:7", ports: [{ containerPort: 6379 }] }] }
---
apiVersion: v1
kind: Service
metadata: { name: redis }
spec: { selector: { app: redis }, ports: [{ port: 6379 }] }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: postgres }
spec:
  selector: { matchLabels: { app: postgres } }
  template:
    metadata: { labels: { app: postgres } }
    spec:
      containers:
        - name: postgres
          image: "postgres:16"
          env: [{ name: POSTGRES_PASSWORD, value: e2e }]
          ports: [{ containerPort: 5432 }]
---
apiVersion: v1
kind: Service
metadata: { name: postgres }
spec: { selector: { app: postgres }, ports: [{ port: 5432 }] }
YAML
kubectl rollout status -n "$ns" deploy/redis deploy/postgres --timeout=180s

step "helm install $release"
# CRDs come from the chart's crds/ folder on install; on upgrades apply them first (helm does not upgrade CRDs).
kubectl apply --server-side -f charts/svc-gateway/crds/
helm upgrade --install "$release" charts/svc-gateway -n "$ns" \
  --set image.repository=svc-gateway --set image.tag=e2e --set image.pullPolicy=Never \
  --set redis.url=redis://redis:6379 \
  --set postgres.url=postgres://postgres:e2e@postgres:5432/postgres \
  --set gateway.autoscaling.enabled=false --set gateway.replicas=2 --set gateway.resources.requests.cpu=50m \
  --wait --timeout 5m
kubectl get pods -n "$ns"

step "sample manifests"
kubectl apply -n "$ns" -f test/e2e/sample.yaml
for _ in $(seq 60); do
  key=$(kubectl get secret -n "$ns" e2e-key-key -o jsonpath='{.data.key}' 2>/dev/null | base64 -d || true)
  [ -n "$key" ] && break
  sleep 1
done
[ -n "${key:-}" ] || { echo "the operator did not generate the key"; kubectl logs -n "$ns" -l app.kubernetes.io/component=operator --tail=50; exit 1; }
kubectl get -n "$ns" svc-gateway
kubectl wait -n "$ns" --for=condition=Ready pod -l app.kubernetes.io/component=gateway --timeout=120s

step "curl through the gateway Service"
kubectl port-forward -n "$ns" "svc/$release-gateway" "$port:80" >/dev/null &
forward_pid=$!
for _ in $(seq 30); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "http://127.0.0.1:$port/v1/chat/completions" -H "Authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"model":"mock-mini","messages":[{"role":"user","content":"Hello from kind"}]}'
echo
curl -fsSN "http://127.0.0.1:$port/v1/chat/completions" -H "Authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"model":"mock-mini","stream":true,"messages":[{"role":"user","content":"Stream, please"}]}' | tail -n 3
curl -fsS "http://127.0.0.1:$port/v1/me" -H "Authorization: Bearer $key"
echo

step "usage rows in Postgres (written by the exporter)"
for _ in $(seq 30); do
  rows=$(kubectl exec -n "$ns" deploy/postgres -- psql -U postgres -tAc 'SELECT count(*) FROM usage_events' 2>/dev/null || echo 0)
  [ "${rows:-0}" -ge 2 ] && break
  sleep 1
done
echo "usage_events rows: ${rows:-0}"
[ "${rows:-0}" -ge 2 ] || { echo "expected 2 usage rows"; kubectl logs -n "$ns" -l app.kubernetes.io/component=exporter --tail=50; exit 1; }

step "rolling restart with the drain (preStop sleep, then SIGTERM)"
kubectl rollout restart -n "$ns" "deploy/$release-gateway"
kubectl rollout status -n "$ns" "deploy/$release-gateway" --timeout=300s

echo
echo "kind end to end: passed"

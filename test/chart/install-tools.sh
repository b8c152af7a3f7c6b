#!/usr/bin/env bash
# Installs helm for the chart tests, once per machine, into ${SVC_TOOLS_BIN:-~/.cache/svc-gateway/bin} (outside the
# repo): `go install` from the Go module proxy (helm v4 has no replace directives), a few minutes cold on 2 cores,
# a no-op after. A helm already on PATH is not used by the tests unless SVC_HELM names it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
bin="${SVC_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/bin}"
stamp="$bin/helm.version"
if [ -x "$bin/helm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$HELM_VERSION" ]; then
  echo "helm $HELM_VERSION: $bin/helm"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "Go is needed to install helm (https://go.dev/dl/), or set SVC_HELM to a helm v4 binary" >&2; exit 1; }
mkdir -p "$bin"
echo "Installing helm $HELM_VERSION into $bin (go install, a few minutes cold)..."
GOBIN="$bin" GOFLAGS="${GOFLAGS:--p=2}" go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
echo "$HELM_VERSION" > "$stamp"
echo "helm $HELM_VERSION: $bin/helm"
